/* Digests, descriptors and platforms as an image writes them, checked
 * before anything else believes them.  Pure code: no I/O, no source. */
#pragma once

#include "image/image.h"

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* A descriptor: its digest as "sha256:HEX" and HEX, both ours once
 * checked; its media type borrowed from the JSON it came from. */
typedef struct {
  char *digest;
  char *hex;
  const char *media_type;
  guint64 size;
} AirlockImageDescriptor;

void airlock_image_descriptor_clear (AirlockImageDescriptor *d);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (AirlockImageDescriptor, airlock_image_descriptor_clear)

/* Whether @hex is exactly 64 lowercase hex digits. */
gboolean airlock_image_is_sha256_hex (const char *hex);

/* "sha256:<64 lowercase hex>" → the hex.  Another algorithm with the
 * grammar of the spec is UNSUPPORTED; anything else (NULL included)
 * MALFORMED.  @what prefixes the message.  Transfer full. */
char *airlock_image_parse_digest (const char *digest, const char *what, GError **error);

/* A descriptor: mediaType, digest and size, all required (MALFORMED
 * otherwise, or the digest's error).  On failure @ret may hold what was
 * read so far: clear it either way. */
gboolean airlock_image_parse_descriptor (JsonNode *node, const char *what,
                                         AirlockImageDescriptor *ret, GError **error);

/* "linux/arm64/v8", for messages and listings: the fields come from the
 * index or the config, so each is escaped (a platform airlock runs is
 * plain ASCII and shows as it is).  Transfer full. */
char *airlock_image_platform_string (const char *os, const char *architecture,
                                     const char *variant);

/* linux/amd64 (no variant or v1); linux/arm64 with no variant or v8. */
gboolean airlock_image_platform_is_arch (const char *os, const char *architecture,
                                         const char *variant, AirlockArch *ret);

G_END_DECLS
