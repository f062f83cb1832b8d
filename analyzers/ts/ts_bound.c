/* ts_bound.c - the token bound of ts_bound.h.
 *
 * A token is lexed where the previous one ended (plus skipped blanks), so
 * the tokens of one parse-stack version start at distinct positions. The
 * scan charges every token to a position it can start at:
 *
 *  - a word (maximal run of [A-Za-z0-9_]) counts 1: both grammars lex
 *    identifiers and keywords by maximal munch, so a second token can start
 *    inside a word only after an escape sequence (`"\nabc"`: the content
 *    `abc` starts after `\n`; such a word counts 2) or after a number that
 *    stops early (`1if`, `0b12`, `0xfg`: a word that starts with a digit
 *    counts every character);
 *  - every other character (punctuation, line ends, each non-ASCII code
 *    point, each byte of ill-formed UTF-8) counts 1;
 *  - a token can start with a blank only where no blank is skipped: string,
 *    template, regex or format-spec content, which runs to the next quote,
 *    `\`, `{`, `}`, `$`, `/`, line end or the end of the source, so each
 *    such character (and the end) counts 1 more;
 *  - zero-width tokens: Python's NEWLINE (one per line end), INDENT (one per
 *    line start) and DEDENT (one per INDENT), JavaScript's automatic
 *    semicolon (one before each line end, `}` or the end): 3 more per line
 *    end, 1 more per `}`, 4 at the end.
 * Line ends are '\n', '\r' and '\f' (the Python scanner treats all three).
 */
#include "ts_bound.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum bound_class {
    B_BLANK, /* space, tab: skipped, never counted */
    B_ALPHA, /* [A-Za-z_] */
    B_DIGIT,
    B_PUNCT, /* any other ASCII character */
    B_STOP,  /* ends blank-started content: ' " ` \ { $ / */
    B_BRACE, /* '}': a stop, and may take an automatic semicolon */
    B_LINE,  /* '\n', '\r', '\f' */
    B_HIGH,  /* a byte >= 0x80 */
};

/* What a character adds besides its own start (see above). */
#define W_STOP 1u
#define W_BRACE (W_STOP + 1u)
#define W_LINE (W_STOP + 3u)
#define W_END 4u
/* The most one byte can add: a line end. */
#define W_MAX_PER_BYTE (1u + W_LINE)

static unsigned char class_of[256];
static pthread_once_t class_once = PTHREAD_ONCE_INIT;

static void classes_init(void)
{
    for (int c = 0; c < 256; c++)
        class_of[c] = c >= 0x80 ? B_HIGH : B_PUNCT;
    for (int c = 'a'; c <= 'z'; c++)
        class_of[c] = class_of[c - 'a' + 'A'] = B_ALPHA;
    for (int c = '0'; c <= '9'; c++)
        class_of[c] = B_DIGIT;
    class_of['_'] = B_ALPHA;
    class_of[' '] = class_of['\t'] = B_BLANK;
    class_of['\n'] = class_of['\r'] = class_of['\f'] = B_LINE;
    static const char stops[] = "'\"`\\{$/";
    for (const char *p = stops; *p; p++)
        class_of[(unsigned char)*p] = B_STOP;
    class_of['}'] = B_BRACE;
}

/* Length of the well-formed UTF-8 sequence at s[0..n) (Unicode table 3-7),
 * or 1 for an ill-formed byte: the lexer decodes it as one character. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t k = c >= 0xC2 && c <= 0xDF   ? 2
               : c >= 0xE0 && c <= 0xEF ? 3
               : c >= 0xF0 && c <= 0xF4 ? 4
                                        : 0;
    if (k == 0 || k > n)
        return 1;
    unsigned char lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    unsigned char hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    if (s[1] < lo || s[1] > hi)
        return 1;
    for (size_t i = 2; i < k; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 1;
    return k;
}

/* The bound of s[0..len) without the end allowance; with per_block,
 * also each line block's share (blocks sized by the caller). */
static uint64_t scan(const unsigned char *s, size_t len, uint64_t *per_block)
{
    pthread_once(&class_once, classes_init);
    uint64_t n = 0, line = 0;
    int run = B_BLANK; /* B_ALPHA / B_DIGIT inside a word, else B_BLANK */
    for (size_t i = 0; i < len;) {
        int k = class_of[s[i]];
        if (k == B_ALPHA || k == B_DIGIT) {
            if (run == B_BLANK) {
                run = k;
                n += 1u + (i > 0 && s[i - 1] == '\\');
            } else if (run == B_DIGIT) {
                n++;
            }
            i++;
            continue;
        }
        run = B_BLANK;
        if (k == B_HIGH) {
            n++;
            i += utf8_len(s + i, len - i);
            continue;
        }
        i++;
        if (k == B_BLANK)
            continue;
        n += 1u + (k == B_STOP ? W_STOP : k == B_BRACE ? W_BRACE : k == B_LINE ? W_LINE : 0u);
        if (per_block && s[i - 1] == '\n') {
            per_block[line / SG_TS_BOUND_BLOCK_LINES] += n;
            n = 0;
            line++;
        }
    }
    if (per_block)
        per_block[line / SG_TS_BOUND_BLOCK_LINES] += n;
    return n;
}

uint64_t sg_ts_token_bound(const char *src, size_t len)
{
    return scan((const unsigned char *)src, len, NULL) + W_END;
}

int sg_ts_bound_needs_guard(const char *src, size_t len)
{
    /* cheap exits: no byte adds more than W_MAX_PER_BYTE, so short sources
     * need no scan; sources tree-sitter cannot even address always guard */
    if (2 * ((uint64_t)len * W_MAX_PER_BYTE + W_END) + SG_TS_BOUND_SLACK <= SG_TS_CHILDREN_MAX)
        return 0;
    if ((uint64_t)len > UINT32_MAX)
        return 1;
    return 2 * sg_ts_token_bound(src, len) + SG_TS_BOUND_SLACK > SG_TS_CHILDREN_MAX;
}

int sg_ts_bound_suffixes(const char *src, size_t len, uint64_t **ret_suffix, size_t *ret_blocks)
{
    size_t lines = 1;
    for (const char *p = src, *end = src + len; p < end && (p = memchr(p, '\n', (size_t)(end - p)));
         p++)
        lines++;
    size_t blocks = (lines + SG_TS_BOUND_BLOCK_LINES - 1) / SG_TS_BOUND_BLOCK_LINES;
    uint64_t *b = calloc(blocks, sizeof(*b));
    if (!b)
        return -ENOMEM;
    scan((const unsigned char *)src, len, b);
    uint64_t acc = W_END;
    for (size_t i = blocks; i-- > 0;) {
        acc += b[i];
        b[i] = acc;
    }
    *ret_suffix = b;
    *ret_blocks = blocks;
    return 0;
}
