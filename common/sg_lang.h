/* sg_lang.h - the languages sandgate runs, their names and aliases: the one
 * table the gateway, the executors, the analyzers and sandgate-check share.
 *
 * Each language has one canonical API name ("python", "nodejs": the
 * executor's --language, the gateway's executors.<lang> keys, audit lines,
 * metrics labels, cache keys). Inputs may accept aliases, in tiers, so that
 * each surface keeps exactly the spellings it has always accepted:
 *
 *   SG_LANG_NAMES_API      "python", "nodejs"
 *   SG_LANG_NAMES_RAGFLOW  + "javascript" (RAGFlow's alias of nodejs; the
 *                          executor's language field and --language)
 *   SG_LANG_NAMES_ALL      + "python3", "js", "node" (sandgate-check --lang,
 *                          the gateway's POST /run language)
 *
 * Matching is exact unless SG_LANG_ANY_CASE is or-ed in: POST /run accepts
 * any case ("JavaScript", "PYTHON"), as RAGFlow does; nothing else does.
 */
#ifndef SG_LANG_COMMON_H
#define SG_LANG_COMMON_H

/* Values are stable: they index per-language arrays (gateway executors). */
enum sg_lang { SG_LANG_PYTHON = 0, SG_LANG_JAVASCRIPT = 1 };
#define SG_LANG_COUNT 2

/* Which spellings sg_lang_parse accepts; or SG_LANG_ANY_CASE into one. */
enum sg_lang_names {
    SG_LANG_NAMES_API = 0,
    SG_LANG_NAMES_RAGFLOW = 1,
    SG_LANG_NAMES_ALL = 2,
};
#define SG_LANG_ANY_CASE 0x100u

/* The canonical API name: "python" or "nodejs"; NULL for a value outside
 * the enum. */
const char *sg_lang_name(enum sg_lang lang);

/* Look name up among the spellings `names` (an enum sg_lang_names value,
 * optionally | SG_LANG_ANY_CASE) allows. Returns 0 and sets *ret_lang, or
 * -EINVAL (name NULL or not accepted; *ret_lang untouched). */
int sg_lang_parse(const char *name, unsigned names, enum sg_lang *ret_lang);

/* sg_lang_parse(name, SG_LANG_NAMES_ALL, ret_lang): every alias, exact case. */
int sg_lang_from_name(const char *name, enum sg_lang *ret_lang);

#endif
