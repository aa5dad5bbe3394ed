/* The image's JSON documents, read from its store bounded, checked against
 * their descriptor's size and digest where they have one, and only then
 * parsed (depth-bounded) and believed. */
#pragma once

#include "image/descriptor-private.h"
#include "image/source-types-private.h"

G_BEGIN_DECLS

/* @data as a JSON object or array, nesting bounded: MALFORMED (LIMIT when
 * too deep) with @what first and the parser's reason printable.  Transfer
 * full. */
JsonNode *airlock_image_parse_json (const char *data, gsize length, const char *what,
                                    GError **error);

/* @path of the source's store, whole, when it holds no more than a JSON
 * document may (LIMIT otherwise); DIGEST when the bytes read are not as
 * many as it has (it changed while it was read), the store's error when
 * it cannot be opened or read.  Messages start with @what. */
GBytes *airlock_image_read_bounded (AirlockImageSource *source, const char *path,
                                    const char *what, GError **error);

/* A content-addressed JSON blob: bounded, size and digest checked against
 * @d, then parsed.  @path NULL: blobs/sha256/HEX.  @context says what it
 * is in messages ("manifest of linux/arm64"); @whose names what declared
 * it ("the manifest", "index.json").  Transfer full. */
JsonNode *airlock_image_read_json_blob (AirlockImageSource *source,
                                        const AirlockImageDescriptor *d, const char *path,
                                        const char *context, const char *whose, GError **error);

/* index.json / manifest.json: not content-addressed, only bounded.
 * Transfer full. */
JsonNode *airlock_image_read_top_json (AirlockImageSource *source, const char *path,
                                       GError **error);

G_END_DECLS
