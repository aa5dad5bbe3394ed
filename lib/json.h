/* JSON the airlock way: the documents someone else chose (image blobs,
 * bundle files, cache records) parsed under a nesting bound, and members
 * written and read back type-checked.
 *
 * Public because the airlock command is a client of this library like any
 * other (the house issue): its --json lines, its replay of a bundle's files
 * and its image cache records are read and written with these, and one copy
 * of them is what keeps the command's JSON and the bundle's the same.  A
 * consumer reading a bundle itself should parse it with the same bound.
 * json-glib's types are in these signatures: airlock.pc requires
 * json-glib-1.0. */
#pragma once

#include <json-glib/json-glib.h>

#include "airlock-macros.h"

G_BEGIN_DECLS

/* ---- parsing under a nesting bound (json-bounded.c) ---- */

/* The deepest nesting accepted.  The formats airlock reads need far less:
 * an OCI config is 4 levels deep at most (config → Healthcheck → Test),
 * an index 4 (manifests → platform → os.features), a bundle's in-toto
 * statement 5; 64 leaves room for annotations and future fields while
 * keeping json-glib's recursion a few kilobytes of stack, on any thread. */
#define AIRLOCK_JSON_MAX_DEPTH 64

#define AIRLOCK_JSON_ERROR (airlock_json_error_quark ())
AIRLOCK_PUBLIC GQuark airlock_json_error_quark (void);

typedef enum {
  AIRLOCK_JSON_ERROR_INVALID,  /* not JSON (json-glib's reason), or not plain JSON */
  AIRLOCK_JSON_ERROR_TOO_DEEP, /* nested deeper than the bound */
} AirlockJsonError;

/* Parses @len bytes of @data (NUL bytes included), after a scan of the
 * bytes that refuses nesting deeper than AIRLOCK_JSON_MAX_DEPTH
 * (AIRLOCK_JSON_ERROR_TOO_DEEP) and what json-glib would read differently
 * from RFC 8259 (AIRLOCK_JSON_ERROR_INVALID: comments, single-quoted
 * strings, other escapes, a lone UTF-16 surrogate, NUL bytes; the scan is
 * json-bounded-private.h's airlock_json_check_depth()).  Returns the
 * document's root (transfer full; never NULL on success), or NULL with
 * AIRLOCK_JSON_ERROR giving the reason and the byte offset (json-glib's
 * own message for a syntax error, which quotes the document's bytes as
 * they are: make it printable before showing it; "no JSON value" for
 * empty text).  @what, when not NULL, starts the message ("@what: …");
 * NULL leaves naming the document to the caller. */
AIRLOCK_PUBLIC JsonNode *airlock_json_parse_bounded (const char *data, gsize len, const char *what,
                                                     GError **error);

/* The largest file airlock_json_load_bounded() reads: the files read that
 * way (cache records, guest image manifests) are a few kilobytes. */
#define AIRLOCK_JSON_MAX_FILE (16 * 1024 * 1024)

/* airlock_json_parse_bounded() over the file at @path (mapped, at most
 * AIRLOCK_JSON_MAX_FILE bytes).  A file that cannot be read fails with
 * its G_FILE_ERROR; one over the size with AIRLOCK_JSON_ERROR_INVALID.
 * @what as for airlock_json_parse_bounded(). */
AIRLOCK_PUBLIC JsonNode *airlock_json_load_bounded (const char *path, const char *what,
                                                    GError **error);

/* ---- members (json-util.c) ---- */

/* "name": value; a NULL string is JSON null.  With @name NULL, the value
 * alone (an array element, or after json_builder_set_member_name). */
AIRLOCK_PUBLIC void airlock_json_set_str (JsonBuilder *b, const char *name, const char *value);
AIRLOCK_PUBLIC void airlock_json_set_int (JsonBuilder *b, const char *name, gint64 value);
AIRLOCK_PUBLIC void airlock_json_set_bool (JsonBuilder *b, const char *name, gboolean value);
/* An array of the strings; null for a NULL @strv. */
AIRLOCK_PUBLIC void airlock_json_set_strv (JsonBuilder *b, const char *name,
                                           const char *const *strv);
/* An image's three digests as members of the object being built:
 * "index", "manifest", "config", in that order (NULL is JSON null: an
 * image with no index).  One writer for every place that names an image
 * by them: the bundle's manifest and verdict.json, `airlock show --json`,
 * the gate's --json image line. */
AIRLOCK_PUBLIC void airlock_json_set_image_digests (JsonBuilder *b, const char *index,
                                                    const char *manifest, const char *config);
/* The strings (char *) of @strings as an array, always: an empty or NULL
 * @strings is [] (a GPtrArray with no elements may have NULL pdata, which
 * airlock_json_set_strv() would write as null). */
AIRLOCK_PUBLIC void airlock_json_set_string_array (JsonBuilder *b, const char *name,
                                                   GPtrArray *strings);
/* The builder's document as text, pretty with a final '\n' or on one line
 * without.  Transfer full. */
AIRLOCK_PUBLIC char *airlock_json_builder_to_text (JsonBuilder *b, gboolean pretty);

/* Members read type-checked: a member of the wrong type reads as absent
 * (NULL, or FALSE with *@ret untouched); @o may be NULL. */
AIRLOCK_PUBLIC JsonObject *airlock_json_get_object (JsonObject *o, const char *name);
AIRLOCK_PUBLIC const char *airlock_json_get_string (JsonObject *o, const char *name);
/* FALSE (and *@ret untouched) unless the member is an integer (a
 * double, a boolean or a string of digits is not). */
AIRLOCK_PUBLIC gboolean airlock_json_get_int (JsonObject *o, const char *name, gint64 *ret);
AIRLOCK_PUBLIC gboolean airlock_json_get_bool (JsonObject *o, const char *name, gboolean *ret);
/* The string elements of an array member (others skipped), each passed
 * through @map when given (transfer full of its result), else copied;
 * NULL without the member. */
AIRLOCK_PUBLIC GStrv airlock_json_get_strv (JsonObject *o, const char *name,
                                            char *(*map) (const char *));

G_END_DECLS
