/* Images that are not files of ours (docker://, containers-storage:),
 * copied by skopeo into an OCI layout in the cache.
 *
 * Speaking to registries and to the containers storage is skopeo's job,
 * not ours: it knows their authentication, mirrors and storage drivers.
 * What it copies is not trusted for that: the layout is read like any
 * other, every blob checked against its digest, and it is cached under the
 * digest of what the reference named (the registry's manifest or index,
 * exactly as served), so a tag that moves is a new copy and the same
 * digest is never copied twice. */
#include "config.h"

#include "image/image.h"
#include "image/blob-private.h"
#include "image/remote-private.h"
#include "fsutil-private.h"
#include "json-bounded-private.h"
#include "paths.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#define DOCKER_PREFIX "docker://"
#define STORAGE_PREFIX "containers-storage:"
/* What a manifest or an index may weigh, as source.c bounds JSON blobs. */
#define MAX_RAW_MANIFEST (4 * 1024 * 1024)
/* How much of skopeo's complaint a message quotes. */
#define MAX_SKOPEO_MESSAGE 2000

gboolean
airlock_image_reference_is_remote (const char *reference)
{
  return g_str_has_prefix (reference, DOCKER_PREFIX) || g_str_has_prefix (reference, STORAGE_PREFIX);
}

static gboolean
is_port (const char *s)
{
  if (!*s)
    return FALSE;
  for (; *s; s++)
    if (!g_ascii_isdigit (*s))
      return FALSE;
  return TRUE;
}

gboolean
airlock_image_reference_is_loopback_registry (const char *reference)
{
  const char *name, *slash;
  g_autofree char *host = NULL;
  char *colon;

  if (!g_str_has_prefix (reference, DOCKER_PREFIX))
    return FALSE;
  name = reference + strlen (DOCKER_PREFIX);
  slash = strchr (name, '/');
  if (!slash)
    return FALSE;
  host = g_strndup (name, (gsize) (slash - name));
  /* Exactly the host and an optional numeric port: anything more (a
   * userinfo '@', a longer name that starts the same) is not loopback. */
  if (host[0] == '[')
    return g_str_has_prefix (host, "[::1]") && (host[5] == '\0' || (host[5] == ':' && is_port (host + 6)));
  colon = strchr (host, ':');
  if (colon)
    {
      if (!is_port (colon + 1))
        return FALSE;
      *colon = '\0';
    }
  return g_str_equal (host, "127.0.0.1") || g_str_equal (host, "localhost");
}

/* Plain HTTP (or TLS unverified) only when asked, and only on loopback: a
 * test's or a developer's local registry.  Anything else is verified TLS,
 * whatever the environment says. */
static gboolean
allow_insecure (const char *reference)
{
  return airlock_image_reference_is_loopback_registry (reference)
         && g_strcmp0 (g_getenv ("AIRLOCK_INSECURE_LOCAL_REGISTRY"), "1") == 0;
}

/* The copy takes exactly what was inspected, even if the tag moves
 * meanwhile (skopeo refuses a tag and a digest together). */
char *
airlock_image_docker_by_digest (const char *reference, const char *digest)
{
  const char *name = reference + strlen (DOCKER_PREFIX);
  const char *at = strchr (name, '@');
  g_autofree char *bare = at ? g_strndup (name, (gsize) (at - name)) : g_strdup (name);
  char *slash = strrchr (bare, '/');
  char *colon = strrchr (slash ? slash : bare, ':');

  if (colon)
    *colon = '\0';
  return g_strdup_printf (DOCKER_PREFIX "%s@%s", bare, digest);
}

/* Runs skopeo with @argv; its standard output into @ret_stdout (may be
 * NULL).  A failure is AIRLOCK_IMAGE_ERROR_NOT_FOUND naming @reference and
 * quoting skopeo's standard error. */
static gboolean
run_skopeo (const char *reference, const char *const *argv, GBytes **ret_stdout, GError **error)
{
  g_autoptr (GSubprocess) proc = NULL;
  g_autoptr (GBytes) none = g_bytes_new_static ("", 0);
  g_autoptr (GBytes) out = NULL;
  g_autoptr (GBytes) err = NULL;
  g_autoptr (GError) local = NULL;
  g_autofree char *message = NULL;

  /* stdin a pipe closed at once: skopeo never waits for a password. */
  proc = g_subprocess_newv (argv, G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE
                                    | G_SUBPROCESS_FLAGS_STDERR_PIPE, &local);
  if (!proc || !g_subprocess_communicate (proc, none, NULL, &out, &err, &local))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_NOT_FOUND,
                   "%s: cannot run '%s': %s", reference, argv[0], local->message);
      return FALSE;
    }
  if (!g_subprocess_get_if_exited (proc) || g_subprocess_get_exit_status (proc) != 0)
    {
      gsize len = err ? g_bytes_get_size (err) : 0;

      message = g_strndup (err ? g_bytes_get_data (err, NULL) : "", MIN (len, MAX_SKOPEO_MESSAGE));
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_NOT_FOUND,
                   "%s: skopeo %s failed: %s", reference, argv[1],
                   *g_strstrip (message) ? message : "(no message)");
      return FALSE;
    }
  if (ret_stdout)
    *ret_stdout = g_steal_pointer (&out);
  return TRUE;
}

/* Whether @dir is an OCI layout whose index.json lists exactly @digest:
 * what a fetch leaves, and what a cached copy must still be. */
static gboolean
layout_holds (const char *dir, const char *digest)
{
  g_autofree char *path = g_build_filename (dir, "index.json", NULL);
  g_autoptr (JsonNode) root = airlock_json_load_bounded (path, path, NULL);
  JsonNode *manifests;
  JsonArray *list;
  JsonNode *entry;

  if (!root || !JSON_NODE_HOLDS_OBJECT (root))
    return FALSE;
  manifests = json_object_get_member (json_node_get_object (root), "manifests");
  if (!manifests || !JSON_NODE_HOLDS_ARRAY (manifests))
    return FALSE;
  list = json_node_get_array (manifests);
  if (json_array_get_length (list) != 1)
    return FALSE;
  entry = json_array_get_element (list, 0);
  return JSON_NODE_HOLDS_OBJECT (entry)
         && g_strcmp0 (json_object_get_string_member_with_default (json_node_get_object (entry),
                                                                    "digest", NULL),
                       digest) == 0;
}

char *
airlock_image_fetch_remote (const char *reference, const char *cache_dir, GError **error)
{
  g_autofree char *skopeo = g_find_program_in_path ("skopeo");
  g_autofree char *cache = cache_dir ? g_strdup (cache_dir) : airlock_default_cache_dir ();
  g_autofree char *root = g_build_filename (cache, "oci", NULL);
  g_autofree char *hex = NULL;
  g_autofree char *digest = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *tmp = NULL;
  g_autofree char *layout = NULL;
  g_autofree char *dest = NULL;
  g_autofree char *source = NULL;
  g_autoptr (GBytes) raw = NULL;
  gboolean insecure = allow_insecure (reference);

  if (!skopeo)
    {
      /* Not an image error: this machine lacks a tool, the image may be fine. */
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "%s: airlock reads registries and containers-storage through skopeo, which is "
                   "not installed (Debian: apt-get install skopeo); or copy the image yourself "
                   "with 'skopeo copy --all %s oci:DIR' and give oci:DIR", reference, reference);
      return NULL;
    }
  {
    const char *argv[] = { skopeo, "inspect", "--raw", insecure ? "--tls-verify=false" : reference,
                           insecure ? reference : NULL, NULL };

    if (!run_skopeo (reference, argv, &raw, error))
      return NULL;
  }
  if (g_bytes_get_size (raw) > MAX_RAW_MANIFEST)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_LIMIT,
                   "%s: its manifest is %" G_GSIZE_FORMAT " bytes, more than the %d allowed",
                   reference, g_bytes_get_size (raw), MAX_RAW_MANIFEST);
      return NULL;
    }
  hex = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, raw);
  digest = g_strconcat ("sha256:", hex, NULL);
  dir = g_strconcat (root, G_DIR_SEPARATOR_S, "sha256-", hex, NULL);
  if (layout_holds (dir, digest))
    return g_steal_pointer (&dir);

  if (strchr (root, ':'))
    {
      /* skopeo's oci:PATH ends the path at a ':'. */
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_FILENAME,
                   "%s: the cache directory '%s' has a ':' in its path, which skopeo's oci: "
                   "destination cannot name", reference, root);
      return NULL;
    }
  /* Only the copies' directory is private, not the cache's root. */
  if (airlock_cache_mkdir (cache, root, 0700) < 0)
    {
      int errsv = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "cannot create '%s': %s",
                   root, g_strerror (errsv));
      return NULL;
    }
  /* Copied beside its place and renamed into it: a copy cut short is never
   * taken for a cached one, and two fetches of the same digest at once
   * both end with one whole layout. */
  tmp = g_build_filename (root, ".fetch-XXXXXX", NULL);
  if (!g_mkdtemp (tmp))
    {
      int errsv = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "cannot create a directory in '%s': %s", root, g_strerror (errsv));
      return NULL;
    }
  layout = g_build_filename (tmp, "layout", NULL);
  dest = g_strconcat ("oci:", layout, NULL);
  source = g_str_has_prefix (reference, DOCKER_PREFIX) ? airlock_image_docker_by_digest (reference, digest)
                                                       : g_strdup (reference);
  {
    /* --preserve-digests: skopeo fails rather than convert or recompress,
     * so the layout holds the bytes the digest names. */
    const char *argv[] = { skopeo, "copy", "--quiet", "--all", "--preserve-digests",
                           insecure ? "--src-tls-verify=false" : source,
                           insecure ? source : dest, insecure ? dest : NULL, NULL };

    if (!run_skopeo (reference, argv, NULL, error))
      {
        airlock_rm_rf (tmp);
        return NULL;
      }
  }
  if (!layout_holds (layout, digest))
    {
      /* containers-storage names no digest to copy by: the image changed
       * between inspect and copy. */
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_DIGEST,
                   "%s: skopeo copied something other than %s, the digest it inspected", reference,
                   digest);
      airlock_rm_rf (tmp);
      return NULL;
    }
  /* A cached copy that no longer holds its digest is replaced. */
  if (g_file_test (dir, G_FILE_TEST_EXISTS) && !layout_holds (dir, digest))
    airlock_rm_rf (dir);
  if (g_rename (layout, dir) < 0 && !layout_holds (dir, digest))
    {
      int errsv = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "cannot rename '%s' to '%s': %s",
                   layout, dir, g_strerror (errsv));
      airlock_rm_rf (tmp);
      return NULL;
    }
  airlock_rm_rf (tmp);
  return g_steal_pointer (&dir);
}

char *
airlock_image_suggest_transport (const char *reference)
{
  g_autoptr (AirlockBlobStore) store = NULL;

  if (g_file_test (reference, G_FILE_TEST_IS_DIR))
    {
      g_autofree char *index = g_build_filename (reference, "index.json", NULL);

      return g_file_test (index, G_FILE_TEST_IS_REGULAR) ? g_strconcat ("oci:", reference, NULL) : NULL;
    }
  if (!g_file_test (reference, G_FILE_TEST_IS_REGULAR))
    return NULL;
  /* Only the archive's table of contents is read here; the image is read
   * (and checked) when the suggested reference is given. */
  store = airlock_blob_store_new_archive (reference, NULL);
  if (store && airlock_blob_store_has (store, "index.json"))
    return g_strconcat ("oci-archive:", reference, NULL);
  if (store && airlock_blob_store_has (store, "manifest.json"))
    return g_strconcat ("docker-archive:", reference, NULL);
  return NULL;
}
