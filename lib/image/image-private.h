/* The AirlockImage the OCI and docker-archive readers build: one per
 * resolved platform, its run settings taken from the image's config. */
#pragma once

#include "image/source-private.h"

G_BEGIN_DECLS

/* An AirlockImageLayer's GDestroyNotify. */
void airlock_image_layer_free (gpointer layer);

/* A new image of @source for @arch: its reference, @choice's platform and
 * index digest, and an empty layer list; the reader fills in the rest.
 * Transfer full. */
AirlockImage *airlock_image_new_for_choice (AirlockImageSource *source, AirlockArch arch,
                                            AirlockManifestChoice *choice);

/* Takes Entrypoint, Cmd, Env, WorkingDir and User from @config's "config"
 * object into @image (empty strings as unset, as in docker).  FALSE
 * (MALFORMED, @what first) when a list is not a list of strings. */
gboolean airlock_image_take_config (JsonObject *config, const char *what, AirlockImage *image,
                                    GError **error);

G_END_DECLS
