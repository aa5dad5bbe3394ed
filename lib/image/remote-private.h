/* Images that are not files of ours: a registry (docker://) or the local
 * containers storage (containers-storage:), copied by skopeo into an OCI
 * layout in the cache, named by the digest of what the reference named, and
 * then read like any oci: layout (every blob checked against its digest). */
#pragma once

#include "image/image.h"

G_BEGIN_DECLS

/* Whether @reference is one skopeo fetches (docker://, containers-storage:). */
gboolean airlock_image_reference_is_remote (const char *reference);

/* The OCI layout directory holding @reference's image in the cache
 * (@cache_dir/oci/sha256-HEX, @cache_dir NULL for
 * airlock_default_cache_dir (), HEX the digest of the manifest or
 * index the reference names now), copied there with `skopeo copy --all
 * --preserve-digests` when it is not yet.  Fails with G_IO_ERROR_NOT_FOUND
 * naming the package and the command to run by hand when skopeo is not
 * installed, with AIRLOCK_IMAGE_ERROR_NOT_FOUND and skopeo's own message
 * when it could not read the image, with AIRLOCK_IMAGE_ERROR_DIGEST when
 * what it copied is not what it inspected.  Transfer full. */
char *airlock_image_fetch_remote (const char *reference, const char *cache_dir, GError **error);

/* Whether a docker:// reference names a registry on this machine's
 * loopback (127.0.0.1, [::1] or localhost, with or without a numeric
 * port): the only ones AIRLOCK_INSECURE_LOCAL_REGISTRY=1 lets airlock
 * read over plain HTTP.  A name without a host part is Docker Hub's. */
gboolean airlock_image_reference_is_loopback_registry (const char *reference);

/* docker://NAME[:TAG][@DIGEST] as docker://NAME@DIGEST, with @digest.  Transfer full. */
char *airlock_image_docker_by_digest (const char *reference, const char *digest);

/* For a reference with no transport airlock takes: when it is the path of
 * an OCI layout directory or of an archive, the reference it should have
 * been ("oci:PATH", "oci-archive:PATH", "docker-archive:PATH"); else NULL. */
char *airlock_image_suggest_transport (const char *reference);

G_END_DECLS
