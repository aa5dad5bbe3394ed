/* Parsing JSON that someone else chose (image blobs, bundle files, cache
 * records): a nesting-depth check over the bytes before json-glib sees
 * them.  json-glib's parser recurses once per '[' or '{' and has no depth
 * limit of its own: 100,000 nested '[' overflow the stack (SIGSEGV).
 * Internal. */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* The deepest nesting accepted.  The formats airlock reads need far less:
 * an OCI config is 4 levels deep at most (config → Healthcheck → Test),
 * an index 4 (manifests → platform → os.features), a bundle's in-toto
 * statement 5; 64 leaves room for annotations and future fields while
 * keeping json-glib's recursion a few kilobytes of stack, on any thread. */
#define AIRLOCK_JSON_MAX_DEPTH 64

#define AIRLOCK_JSON_ERROR (airlock_json_error_quark ())
GQuark airlock_json_error_quark (void);

typedef enum {
  AIRLOCK_JSON_ERROR_INVALID,  /* not JSON (json-glib's reason), or not plain JSON */
  AIRLOCK_JSON_ERROR_TOO_DEEP, /* nested deeper than the bound */
} AirlockJsonError;

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

/* airlock_json_check_depth() with AIRLOCK_JSON_MAX_DEPTH, then json-glib
 * over the same bytes.  Returns the document's root (transfer full; never
 * NULL on success), or NULL with AIRLOCK_JSON_ERROR (json-glib's own
 * message for a syntax error, which quotes the document's bytes as they
 * are: make it printable before showing it; "no JSON value" for empty
 * text).  @what as for airlock_json_check_depth(). */
JsonNode *airlock_json_parse_bounded (const char *data, gsize len, const char *what,
                                      GError **error);

/* The largest file airlock_json_load_bounded() reads: the files read that
 * way (cache records, guest image manifests) are a few kilobytes. */
#define AIRLOCK_JSON_MAX_FILE (16 * 1024 * 1024)

/* airlock_json_parse_bounded() over the file at @path (mapped, at most
 * AIRLOCK_JSON_MAX_FILE bytes).  A file that cannot be read fails with
 * its G_FILE_ERROR; one over the size with AIRLOCK_JSON_ERROR_INVALID.
 * @what as for airlock_json_check_depth(). */
JsonNode *airlock_json_load_bounded (const char *path, const char *what, GError **error);

G_END_DECLS
