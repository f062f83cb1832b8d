/* rules.h - the stable rule ids. Each is documented in policies/README.md
 * with a failing and a passing example. Never rename one: clients, audit
 * logs and dashboards key on them. */
#ifndef SG_RULES_H
#define SG_RULES_H

/* Canonicalisation (before parsing; see canon.h) */
#define SG_RULE_INVALID_UTF8 "source.invalid-utf8"
#define SG_RULE_NUL_BYTE "source.nul-byte"
#define SG_RULE_LONE_CR "source.lone-cr"
#define SG_RULE_CODING_COOKIE "source.coding-cookie"
#define SG_RULE_LINE_SEPARATOR "source.line-separator"
#define SG_RULE_BIDI_CONTROL "source.bidi-control"
#define SG_RULE_MIXED_INDENTATION "source.mixed-indentation"
/* Parsing and structural limits */
#define SG_RULE_SYNTAX_ERROR "parse.syntax-error"
#define SG_RULE_CONTEXT_KEYWORD "parse.context-keyword"
#define SG_RULE_ANNOTATION_MEMBER "parse.annotation-member"
#define SG_RULE_SOURCE_BYTES "limit.source-bytes"
#define SG_RULE_DEPTH "limit.depth"
#define SG_RULE_NODES "limit.nodes"
#define SG_RULE_LANGUAGE_DISABLED "language.disabled"
/* Analysis */
#define SG_RULE_IMPORT_NOT_ALLOWED "import.not-allowed"
#define SG_RULE_IMPORT_DENIED "import.denied"
/* the gateway's, after analysis: no image or package set installs the module */
#define SG_RULE_IMPORT_NOT_INSTALLED "import.not-installed"
/* a network module (the policy's network_modules) in a job without network */
#define SG_RULE_NETWORK_DISABLED "network.disabled"
#define SG_NETWORK_DISABLED_HOW                                                                    \
    "network is off for this job: an operator grants hosts to the tenant (tokens file "            \
    "\"network\": {\"allow\": [...]}) and the job asks for them with \"network\": "                \
    "{\"allow\": [...]}"
#define SG_RULE_IMPORT_DYNAMIC "import.dynamic"
#define SG_RULE_NAME_FORBIDDEN "name.forbidden"
#define SG_RULE_CALL_FORBIDDEN "call.forbidden"
#define SG_RULE_ATTRIBUTE_FORBIDDEN "attribute.forbidden"
#define SG_RULE_ATTRIBUTE_DUNDER "attribute.dunder"
#define SG_RULE_ATTRIBUTE_PRIVATE "attribute.private"
#define SG_RULE_ATTRIBUTE_CAPABILITY "attribute.capability"
#define SG_RULE_REFLECTION_DYNAMIC "reflection.dynamic-name"

#define SG_SEVERITY_ERROR "error"

#endif
