/* python.h - the Python analyzer's entry point, called through analyze.c's
 * language table (lang.h states the contract). */
#ifndef SG_PYTHON_H
#define SG_PYTHON_H

#include "lang.h"

sg_lang_check_fn sg_python_check;

#endif
