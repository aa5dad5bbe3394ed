/* Parsing JSON that someone else chose (image blobs, bundle files, cache
 * records): a nesting-depth check over the bytes before json-glib sees
 * them.  json-glib's parser recurses once per '[' or '{' and has no depth
 * limit of its own: 100,000 nested '[' overflow the stack (SIGSEGV).
 * The bound, its error domain and the parsers are public (json.h); the
 * scan itself is internal. */
#pragma once

#include "json.h"

G_BEGIN_DECLS

/* Scans @len bytes of @data (NUL bytes included) as RFC 8259 text, without
 * building anything, and fails when arrays and objects nest more than
 * @max_depth deep; brackets inside strings do not count.  The scan must
 * see the same strings json-glib will, so it also refuses what json-glib
 * would read differently from it: comments and single-quoted strings
 * (json-glib 1.6 takes both), escapes other than JSON's, a \u escape that
 * is a lone UTF-16 surrogate (json-glib then swallows the next character,
 * a closing quote included), NUL bytes, an unterminated string and a ']'
 * or '}' that closes nothing.  Anything else (numbers, literals, commas)
 * is left to json-glib.  On failure @error (AIRLOCK_JSON_ERROR_TOO_DEEP or
 * _INVALID) gives the reason and the byte offset; @what, when not NULL,
 * starts the message ("@what: …"); NULL leaves naming the document to a
 * caller that does it itself. */
gboolean airlock_json_check_depth (const char *data, gsize len, guint max_depth, const char *what,
                                   GError **error);

G_END_DECLS
