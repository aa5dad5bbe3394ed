/* The internal toolbox's JSON and hex helpers: writing members with
 * json-glib's builder, and reading them back type-checked (a member of the
 * wrong type reads as absent: nothing read from a file is trusted).  Used
 * by the bundle, the image intake, the guest-image cache and the CLI; the
 * one place these are written (the house issue: four copies before). */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS
/* "name": value; a NULL string is JSON null.  With @name NULL, the value
 * alone (an array element, or after json_builder_set_member_name). */
void airlock_json_set_str (JsonBuilder *b, const char *name, const char *value);
void airlock_json_set_int (JsonBuilder *b, const char *name, gint64 value);
void airlock_json_set_bool (JsonBuilder *b, const char *name, gboolean value);
/* An array of the strings; null for a NULL @strv. */
void airlock_json_set_strv (JsonBuilder *b, const char *name, const char *const *strv);
/* An image's three digests as members of the object being built:
 * "index", "manifest", "config", in that order (NULL is JSON null: an
 * image with no index).  One writer for every place that names an image
 * by them: the bundle's manifest and verdict.json, `airlock show --json`,
 * the gate's --json image line. */
void airlock_json_set_image_digests (JsonBuilder *b, const char *index, const char *manifest,
                                     const char *config);
/* The builder's document as text, pretty with a final '\n' or on one line
 * without.  Transfer full. */
char *airlock_json_builder_to_text (JsonBuilder *b, gboolean pretty);

JsonObject *airlock_json_get_object (JsonObject *o, const char *name);
JsonArray *airlock_json_get_array (JsonObject *o, const char *name);
const char *airlock_json_get_string (JsonObject *o, const char *name);
/* FALSE (and *@ret untouched) unless the member is an integer. */
gboolean airlock_json_get_int (JsonObject *o, const char *name, gint64 *ret);
gboolean airlock_json_get_bool (JsonObject *o, const char *name, gboolean *ret);
/* The string elements of an array member (others skipped), each passed
 * through @map when given (transfer full of its result), else copied;
 * NULL without the member. */
GStrv airlock_json_get_strv (JsonObject *o, const char *name, char *(*map) (const char *));

/* Lower-case hex of @n bytes.  Transfer full. */
char *airlock_hex_encode (const guint8 *bytes, gsize n);
/* Exactly 2 * @n hex digits into @out; FALSE otherwise. */
gboolean airlock_hex_decode (const char *hex, guint8 *out, gsize n);

G_END_DECLS
