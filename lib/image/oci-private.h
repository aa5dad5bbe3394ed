/* OCI images: an OCI layout (a directory, an oci-archive, or what skopeo
 * copied into the cache) read as index.json → image indexes → the
 * manifest of each platform → its config and layers. */
#pragma once

#include "image/source-types-private.h"

G_BEGIN_DECLS

/* Reads index.json (only the entries tagged @source->tag when it names
 * one) and the indexes it nests into @source->choices, one per manifest.
 * Fails with NOT_FOUND (no index.json, no such tag, no manifest),
 * REFERENCE (several tags and none named), LIMIT, MALFORMED, DIGEST or
 * UNSUPPORTED; messages start with the reference. */
gboolean airlock_image_oci_open (AirlockImageSource *source, GError **error);

/* Learns @choice's platform from its config when the index does not say
 * it (loading its manifest and config); TRUE at once when it is known. */
gboolean airlock_image_oci_ensure_platform (AirlockImageSource *source,
                                            AirlockManifestChoice *choice, GError **error);

/* The image of @choice, which its index lists for @arch (@label, e.g.
 * "linux/arm64", names it in messages): its manifest and config read and
 * checked, the config's platform compared with @arch, its layers' types
 * known.  Records each layer's context in @source->layer_context.
 * Transfer full; NULL with @error set otherwise. */
AirlockImage *airlock_image_oci_resolve (AirlockImageSource *source, AirlockArch arch,
                                         AirlockManifestChoice *choice, const char *label,
                                         GError **error);

G_END_DECLS
