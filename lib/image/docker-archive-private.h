/* docker-archive: the tar `docker save` writes, its manifest.json naming
 * each image's config and layers by path. */
#pragma once

#include "image/source-types-private.h"

G_BEGIN_DECLS

/* Reads manifest.json, selects the image @source->tag names (NAME:TAG or
 * @N; the only one when none is named), checks its config against the
 * digest its name carries and its layers against the config's diff_ids,
 * and records the one choice its config's platform makes.  Fails with
 * NOT_FOUND, REFERENCE (several images and none named), MALFORMED,
 * DIGEST or LIMIT; messages start with the reference. */
gboolean airlock_image_docker_open (AirlockImageSource *source, GError **error);

/* The image @choice (the archive's one) makes for @arch.  Transfer full. */
AirlockImage *airlock_image_docker_resolve (AirlockImageSource *source, AirlockArch arch,
                                            AirlockManifestChoice *choice, GError **error);

G_END_DECLS
