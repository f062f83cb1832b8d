/* sg_lang.c - the language table and its aliases (sg_lang.h). */
#include "sg_lang.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

static const struct {
    const char *name;
    enum sg_lang lang;
    enum sg_lang_names tier; /* the narrowest set that accepts this spelling */
} spellings[] = {
    {"python", SG_LANG_PYTHON, SG_LANG_NAMES_API},
    {"nodejs", SG_LANG_JAVASCRIPT, SG_LANG_NAMES_API},
    {"javascript", SG_LANG_JAVASCRIPT, SG_LANG_NAMES_RAGFLOW},
    {"python3", SG_LANG_PYTHON, SG_LANG_NAMES_ALL},
    {"js", SG_LANG_JAVASCRIPT, SG_LANG_NAMES_ALL},
    {"node", SG_LANG_JAVASCRIPT, SG_LANG_NAMES_ALL},
};

const char *sg_lang_name(enum sg_lang lang)
{
    switch (lang) {
    case SG_LANG_PYTHON:
        return "python";
    case SG_LANG_JAVASCRIPT:
        return "nodejs";
    }
    return NULL;
}

int sg_lang_parse(const char *name, unsigned names, enum sg_lang *ret_lang)
{
    unsigned tier = names & ~SG_LANG_ANY_CASE;
    int any_case = (names & SG_LANG_ANY_CASE) != 0;
    for (size_t i = 0; name && i < sizeof(spellings) / sizeof(spellings[0]); i++) {
        if ((unsigned)spellings[i].tier > tier)
            continue;
        if (any_case ? strcasecmp(name, spellings[i].name) == 0
                     : strcmp(name, spellings[i].name) == 0) {
            *ret_lang = spellings[i].lang;
            return 0;
        }
    }
    return -EINVAL;
}

int sg_lang_from_name(const char *name, enum sg_lang *ret_lang)
{
    return sg_lang_parse(name, SG_LANG_NAMES_ALL, ret_lang);
}
