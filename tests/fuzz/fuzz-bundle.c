/* libFuzzer harness for the bundle verifier and reader
 * (lib/bundle/bundle-verify.c, bundle-read.c): `airlock verify` and
 * `airlock show` take a bundle from anywhere.
 *
 * The input (fuzz-bundle.h) is a whole bundle directory: its files (and
 * symlinks and subdirectories, which a bundle must not hold).  The harness
 * writes it into a directory of its own under /dev/shm (or the temporary
 * directory), runs airlock_bundle_verify() without and with a key and
 * airlock_bundle_read(), and removes it again.  Seeds (gen-bundle-corpus)
 * are a real bundle of the sample egress image and variants of it: signed
 * with FUZZ_BUNDLE_KEY, unfinished, without its capture.
 *
 * Besides the sanitizers' findings (a crash, a leak, a GLib critical),
 * it aborts when:
 *   - a problem has no message, or the re-derived verdict is not one of
 *     pass, fail, inconclusive;
 *   - a bundle verifies (no problem) without an arch or a verdict, or,
 *     under the key, without its HMAC checked;
 *   - a bundle verifies under the key although an independent check of
 *     layer 1 (manifest.json's files against the directory: every listed
 *     file a regular one with that SHA-256 and size, nothing unlisted)
 *     fails;
 *   - the reader returns a string it promises is safe to print (bundle-
 *     read.h: every string taken from a file) that is not: invalid UTF-8
 *     or a control character (INCOMPLETE's text may keep its newlines). */
#include "config.h"

#include "bundle/bundle-read.h"
#include "bundle/bundle.h"

#include "fuzz-bundle.h"
#include "fuzz-util.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static char *parent_dir;
static char *bundle_dir;

static void
remove_parent (void)
{
  if (parent_dir)
    g_rmdir (parent_dir);
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  g_autoptr (GError) error = NULL;

  (void) argc;
  (void) argv;
  fuzz_glib_warnings_abort ();
  /* tmpfs when there is one: every input writes a whole bundle. */
  if (g_file_test ("/dev/shm", G_FILE_TEST_IS_DIR) && access ("/dev/shm", W_OK) == 0)
    parent_dir = g_mkdtemp (g_strdup ("/dev/shm/fuzz-bundle-XXXXXX"));
  if (!parent_dir)
    parent_dir = g_dir_make_tmp ("fuzz-bundle-XXXXXX", &error);
  if (!parent_dir)
    {
      fprintf (stderr, "fuzz-bundle: cannot make a directory: %s\n",
               error ? error->message : g_strerror (errno));
      abort ();
    }
  bundle_dir = g_build_filename (parent_dir, "bundle", NULL);
  atexit (remove_parent);
  return 0;
}

static void
check_text (const char *s)
{
  if (s)
    fuzz_check_safe_text (s);
}

static void
check_texts (GPtrArray *a)
{
  for (guint i = 0; a && i < a->len; i++)
    fuzz_check_safe_text (a->pdata[i]);
}

static void
check_view (const AirlockBundleView *v)
{
  fuzz_check (v != NULL);
  check_text (v->arch);
  if (v->incomplete)
    {
      g_autofree char *flat = g_strdelimit (g_strdup (v->incomplete), "\n", ' ');

      fuzz_check_safe_text (flat);
    }
  check_texts (v->missing);
  check_texts (v->problems);
  check_text (v->reference);
  check_text (v->index_digest);
  check_text (v->manifest_digest);
  check_text (v->config_digest);
  check_text (v->kernel_release);
  check_text (v->kernel_sha256);
  check_text (v->initramfs_sha256);
  check_text (v->supervisor_sha256);
  check_text (v->supervisor_build_id);
  check_text (v->accel);
  check_text (v->incomplete_reason);
  check_text (v->pcap_error);
  check_text (v->started);
  check_text (v->finished);
  check_text (v->verdict);
  check_texts (v->reasons);
  check_texts (v->unattributed);
  for (guint i = 0; v->controls && i < v->controls->len; i++)
    {
      const AirlockBundleControl *c = v->controls->pdata[i];

      check_text (c->name);
      check_text (c->key);
    }
  for (guint i = 0; v->calls && i < v->calls->len; i++)
    {
      const AirlockBundleCall *c = v->calls->pdata[i];

      check_text (c->exe);
      check_text (c->syscall);
      check_text (c->socket);
      check_text (c->destination);
      check_text (c->action);
      check_text (c->deny_reason);
      check_text (c->outcome);
      fuzz_check (c->dns_names != NULL);
      for (char **n = c->dns_names; *n; n++)
        fuzz_check_safe_text (*n);
    }
  for (guint i = 0; v->processes && i < v->processes->len; i++)
    {
      const AirlockBundleProcess *p = v->processes->pdata[i];

      check_text (p->path);
      check_text (p->caller);
      for (char **a = p->argv; a && *a; a++)
        fuzz_check_safe_text (*a);
    }
  check_text (v->workload_exit);
  check_text (v->sinkhole_error);
  if (v->network)
    {
      const AirlockNetworkReport *n = v->network;

      check_text (n->incomplete_reason);
      check_text (n->first_refused);
      for (guint i = 0; i < n->lookups->len; i++)
        {
          const AirlockNetworkLookup *l = n->lookups->pdata[i];

          check_text (l->question);
          check_text (l->qtype);
          fuzz_check (l->answer != NULL);
          fuzz_check_safe_text (l->answer);
          fuzz_check_safe_text (l->transport);
          check_text (l->server);
        }
      for (guint i = 0; i < n->connections->len; i++)
        {
          const AirlockNetworkConnection *c = n->connections->pdata[i];

          fuzz_check_safe_text (c->key);
          check_text (c->name);
          check_text (c->address);
          fuzz_check_safe_text (c->protocol);
          check_text (c->detail);
          check_text (c->response);
        }
    }
  check_texts (v->console_tail);
}

static const char *
member_string (JsonObject *o, const char *name)
{
  JsonNode *n = json_object_get_member (o, name);

  return n && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
           ? json_node_get_string (n) : NULL;
}

static gboolean
member_int (JsonObject *o, const char *name, gint64 *ret)
{
  JsonNode *n = json_object_get_member (o, name);

  if (!n || !JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_INT64)
    return FALSE;
  *ret = json_node_get_int (n);
  return TRUE;
}

/* Layer 1 again, independently: what a verified bundle must be. */
static gboolean
files_match_manifest (void)
{
  static const char *const unlisted_ok[] = { "manifest.json", "manifest.hmac", NULL };
  g_autofree char *manifest_path = g_build_filename (bundle_dir, "manifest.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GDir) d = NULL;
  JsonObject *files;
  const char *entry;

  if (!json_parser_load_from_file (parser, manifest_path, NULL)
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return FALSE;
  {
    JsonNode *n = json_object_get_member (json_node_get_object (json_parser_get_root (parser)),
                                          "files");

    if (!n || !JSON_NODE_HOLDS_OBJECT (n))
      return FALSE;
    files = json_node_get_object (n);
  }
  {
    g_autoptr (GList) names = json_object_get_members (files);

    for (GList *l = names; l; l = l->next)
      {
        JsonNode *node = json_object_get_member (files, l->data);
        JsonObject *f = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
        g_autofree char *path = g_build_filename (bundle_dir, l->data, NULL);
        g_autofree char *contents = NULL;
        g_autofree char *sha = NULL;
        const char *want_sha = f ? member_string (f, "sha256") : NULL;
        gint64 want_size;
        gsize len;
        struct stat st;

        if (!want_sha || !member_int (f, "size", &want_size))
          return FALSE;
        if (lstat (path, &st) < 0 || !S_ISREG (st.st_mode)
            || !g_file_get_contents (path, &contents, &len, NULL))
          return FALSE;
        sha = g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guint8 *) contents, len);
        if (g_ascii_strcasecmp (sha, want_sha) != 0 || (gint64) len != want_size)
          return FALSE;
      }
  }
  d = g_dir_open (bundle_dir, 0, NULL);
  while (d && (entry = g_dir_read_name (d)))
    if (!g_strv_contains (unlisted_ok, entry) && !json_object_has_member (files, entry))
      return FALSE;
  return TRUE;
}

static void
check_report (const AirlockBundleReport *r, gboolean keyed)
{
  fuzz_check (r != NULL && r->problems != NULL);
  for (guint i = 0; i < r->problems->len; i++)
    {
      const AirlockBundleProblem *p = r->problems->pdata[i];

      /* Every problem reaches a terminal or a CI page: bundle-verify.c
       * escapes what it quotes of the bundle (INCOMPLETE's line, the
       * manifest's values, file names). */
      fuzz_check (p->message != NULL && p->message[0] != '\0');
      fuzz_check_safe_text (p->message);
      if (p->file)
        fuzz_check_safe_text (p->file);
    }
  if (r->arch)
    fuzz_check_safe_text (r->arch);
  fuzz_check (r->verdict == NULL || g_str_equal (r->verdict, "pass")
              || g_str_equal (r->verdict, "fail") || g_str_equal (r->verdict, "inconclusive"));
  if (r->problems->len == 0)
    {
      fuzz_check (r->arch != NULL && r->verdict != NULL);
      if (keyed)
        {
          fuzz_check (r->hmac_checked);
          fuzz_check (files_match_manifest ());
        }
    }
}

static gboolean
write_entry (int dirfd, const FuzzBundleEntry *e)
{
  switch (e->type)
    {
    case FUZZ_BUNDLE_FILE:
      {
        int fd = openat (dirfd, e->name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        gsize off = 0;

        if (fd < 0)
          return FALSE;
        while (off < e->len)
          {
            ssize_t n = write (fd, e->data + off, e->len - off);

            if (n <= 0)
              break;
            off += (gsize) n;
          }
        close (fd);
        return TRUE;
      }
    case FUZZ_BUNDLE_SYMLINK:
      {
        g_autofree char *target = g_strndup ((const char *) e->data, e->len);

        return *target && symlinkat (target, dirfd, e->name) == 0;
      }
    case FUZZ_BUNDLE_DIR:
      return mkdirat (dirfd, e->name, 0755) == 0;
    default:
      return FALSE;
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr (GPtrArray) made = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GBytes) key = g_bytes_new_static (FUZZ_BUNDLE_KEY, strlen (FUZZ_BUNDLE_KEY));
  FuzzBundleEntry e;
  gsize pos = 0;
  int dirfd;

  if (g_mkdir (bundle_dir, 0755) < 0)
    abort ();   /* the last input's directory was not removed */
  dirfd = open (bundle_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  fuzz_check (dirfd >= 0);
  while (made->len < FUZZ_BUNDLE_MAX_ENTRIES && fuzz_bundle_next (data, size, &pos, &e))
    if (fuzz_bundle_name_ok (e.name) && write_entry (dirfd, &e))
      g_ptr_array_add (made, g_strdup (e.name));

  {
    g_autoptr (AirlockBundleReport) plain = airlock_bundle_verify (bundle_dir, NULL);
    g_autoptr (AirlockBundleReport) keyed = airlock_bundle_verify (bundle_dir, key);
    g_autoptr (AirlockBundleView) view = airlock_bundle_read (bundle_dir, 20);

    check_report (plain, FALSE);
    check_report (keyed, TRUE);
    check_view (view);
  }

  /* Only what was made here: verify and read write nothing. */
  for (guint i = 0; i < made->len; i++)
    if (unlinkat (dirfd, made->pdata[i], 0) < 0)
      fuzz_check (unlinkat (dirfd, made->pdata[i], AT_REMOVEDIR) == 0);
  close (dirfd);
  fuzz_check (g_rmdir (bundle_dir) == 0);
  return 0;
}
