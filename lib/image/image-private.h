/* The AirlockImage the OCI and docker-archive readers build: one per
 * resolved platform, its run settings taken from the image's config. */
#pragma once

#include "image/source-types-private.h"

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

/* The config's rootfs.diff_ids, once @layers (the list @layers_what
 * holds, @whose in messages: "the manifest", "manifest.json") is within
 * AIRLOCK_IMAGE_MAX_LAYERS (LIMIT otherwise) and the config lists as many
 * (MALFORMED otherwise, @config_what first).  Borrowed from @config. */
JsonArray *airlock_image_config_diff_ids (JsonObject *config, JsonArray *layers,
                                          const char *layers_what, const char *whose,
                                          const char *config_what, GError **error);

G_END_DECLS
