/* What an opened image source holds, shared by the files that read it:
 * source.c (the public API), oci.c (index → manifest → config),
 * docker-archive.c (docker save's manifest.json), json-blob.c (the blobs
 * they read) and image.c (the AirlockImage they build).  Types and bounds
 * only: no function is declared here, so each of those files includes it
 * without depending on another's code. */
#pragma once

#include "image/blob-private.h"
#include "image/image.h"

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Bounds on what an image may ask of us. */
#define AIRLOCK_IMAGE_MAX_LAYERS 1000

/* The Docker v2 types: an OCI manifest may use them, and the manifest a
 * registry would hold for a docker-archive image is written with them. */
#define AIRLOCK_MT_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define AIRLOCK_MT_DOCKER_CONFIG "application/vnd.docker.container.image.v1+json"
#define AIRLOCK_MT_DOCKER_LAYER_TAR "application/vnd.docker.image.rootfs.diff.tar"

typedef enum {
  AIRLOCK_SOURCE_OCI_DIR,
  AIRLOCK_SOURCE_OCI_ARCHIVE,
  AIRLOCK_SOURCE_DOCKER_ARCHIVE,
} AirlockSourceKind;

/* One manifest an arch could resolve to. */
typedef struct {
  JsonNode *descriptor;       /* the index entry (OCI); NULL for docker-archive */
  char *index_digest;         /* the index blob it was listed in, or NULL */
  char *where;                /* "index.json", "index sha256:…": for messages */
  gboolean platform_known;
  char *os, *architecture, *variant;
  gboolean platform_from_index;
} AirlockManifestChoice;

struct _AirlockImageSource {
  char *reference;
  AirlockSourceKind kind;
  char *tag;
  AirlockBlobStore *store;
  GPtrArray *choices;         /* AirlockManifestChoice * */
  guint entries_seen;         /* index entries visited, over the whole tree */
  GHashTable *layer_context;  /* digest → "layer 2 of linux/arm64", for messages */
  /* docker-archive: the one image of manifest.json */
  JsonNode *docker_config;
  char *docker_config_digest;
  guint64 docker_config_size;
  char *docker_manifest_digest;
  GPtrArray *docker_layers;   /* AirlockImageLayer * */
  GHashTable *layer_paths;    /* digest → path in the archive */
};

G_END_DECLS
