/* The internal toolbox's JSON and hex helpers: writing members with
 * json-glib's builder, and reading them back type-checked (a member of the
 * wrong type reads as absent: nothing read from a file is trusted).  Used
 * by the bundle, the image intake, the guest-image cache and the CLI; the
 * one place these are written (the house issue: four copies before).
 * What the command uses is public (json.h); the rest stays here. */
#pragma once

#include "json.h"

G_BEGIN_DECLS

JsonArray *airlock_json_get_array (JsonObject *o, const char *name);

/* Lower-case hex of @n bytes.  Transfer full. */
char *airlock_hex_encode (const guint8 *bytes, gsize n);
/* Exactly 2 * @n hex digits into @out; FALSE otherwise. */
gboolean airlock_hex_decode (const char *hex, guint8 *out, gsize n);

G_END_DECLS
