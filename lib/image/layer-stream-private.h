/* A layer blob's stored bytes → its plain tar, verified as it is read. */
#pragma once

#include "image.h"

G_BEGIN_DECLS

/* Wraps @raw (transfer full): hashes every stored byte, decompresses per
 * @compression, fails as soon as more than @size bytes arrive, and at the
 * end unless exactly @size bytes with SHA-256 @sha256_hex arrived.  Every
 * error message starts with @what ("oci:x: blob sha256:… (layer 2 of
 * linux/arm64)"); codes are AIRLOCK_IMAGE_ERROR_DIGEST and _MALFORMED. */
GInputStream *airlock_layer_stream_new (GInputStream *raw, guint64 size, const char *sha256_hex,
                                        AirlockLayerCompression compression, const char *what);

G_END_DECLS
