/* javascript.h - the JavaScript analyzer's entry point, called through
 * analyze.c's language table (lang.h states the contract). */
#ifndef SG_JAVASCRIPT_H
#define SG_JAVASCRIPT_H

#include "lang.h"

sg_lang_check_fn sg_javascript_check;

#endif
