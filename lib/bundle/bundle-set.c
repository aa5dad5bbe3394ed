/* A gate's bundles as one set (bundle.h): the set record the gate writes
 * at the top of its --out directory, `airlock verify DIR` of that
 * directory.
 *
 * Each bundle proves one arch's run; nothing in it says which other
 * bundles it was gated with.  Without the set record a failing arm64
 * bundle could be replaced by a passing amd64 one copied into arm64/, or
 * simply deleted, and every bundle left would still verify.  The record
 * names the arches asked for, the image, a random gate id (which each
 * bundle's manifest repeats, under its own digests and HMAC) and each
 * bundle's manifest.json digest, and is signed with the bundles' key.
 * The one rule every HMAC key is read under is bundle-key.c's. */
#include "config.h"

#include "bundle/bundle.h"
#include "bundle/problem-private.h"
#include "fsutil-private.h"
#include "json-util-private.h"
#include "json-bounded-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* set.json is a few hundred bytes; anything much larger is not ours.  Its
 * JSON passes the same depth check as every other (json-bounded-private.h). */
#define SET_RECORD_MAX 16384
#define GATE_ID_BYTES 16

static char *
hmac_hex (GBytes *key, const char *data, gsize len)
{
  g_autoptr (GHmac) hmac = g_hmac_new (G_CHECKSUM_SHA256, g_bytes_get_data (key, NULL),
                                       g_bytes_get_size (key));

  g_hmac_update (hmac, (const guchar *) data, (gssize) len);
  return g_strdup (g_hmac_get_string (hmac));
}

/* ---- writing ---- */

char *
airlock_bundle_set_new_id (void)
{
  guint8 id[GATE_ID_BYTES];
  gsize got = 0;

  while (got < sizeof id)
    {
      ssize_t n = getrandom (id + got, sizeof id - got, 0);

      if (n < 0 && errno == EINTR)
        continue;
      /* getrandom() on a Linux new enough for the rest of airlock does not
       * fail for 16 bytes; a gate without a unique id must not go on. */
      g_assert (n > 0);
      got += (gsize) n;
    }
  return airlock_hex_encode (id, sizeof id);
}

static gboolean
write_new_file (const char *dir, const char *name, const char *text, GError **error)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  gsize len = strlen (text);
  int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  int saved;

  if (fd < 0)
    {
      g_set_error (error, AIRLOCK_BUNDLE_ERROR,
                   errno == EEXIST ? AIRLOCK_BUNDLE_ERROR_EXISTS : AIRLOCK_BUNDLE_ERROR_IO,
                   "cannot create '%s': %s", path, g_strerror (errno));
      return FALSE;
    }
  saved = airlock_write_all (fd, text, len) ? 0 : errno;
  if (!saved && fsync (fd) < 0)
    saved = errno;
  if (close (fd) < 0 && !saved)
    saved = errno;
  if (saved)
    {
      g_set_error (error, AIRLOCK_BUNDLE_ERROR, AIRLOCK_BUNDLE_ERROR_IO, "cannot write '%s': %s",
                   path, g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

/* The digest of @dir/@arch/manifest.json when that bundle was finished,
 * else NULL. */
static char *
finished_manifest_sha256 (const char *dir, const char *arch)
{
  g_autofree char *marker = g_build_filename (dir, arch, AIRLOCK_BUNDLE_INCOMPLETE, NULL);
  g_autofree char *manifest = g_build_filename (dir, arch, "manifest.json", NULL);

  if (g_file_test (marker, G_FILE_TEST_EXISTS | G_FILE_TEST_IS_SYMLINK))
    return NULL;
  return airlock_sha256_file (manifest, NULL);
}

gboolean
airlock_bundle_set_write (const char *dir, const AirlockBundleSetInput *in, GError **error)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autofree char *text = NULL;

  g_return_val_if_fail (in->gate_id != NULL, FALSE);
  if (in->key && !airlock_bundle_key_check (in->key, "the set record's HMAC key", error))
    return FALSE;

  json_builder_begin_object (b);
  airlock_json_set_str (b, "set", AIRLOCK_BUNDLE_SET_FORMAT);
  airlock_json_set_str (b, "gate", in->gate_id);
  json_builder_set_member_name (b, "arches");
  json_builder_begin_array (b);
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    if (in->arches[a])
      json_builder_add_string_value (b, airlock_arch_to_string ((AirlockArch) a));
  json_builder_end_array (b);
  json_builder_set_member_name (b, "image");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "reference", in->reference);
  airlock_json_set_str (b, "index", in->index_digest);
  json_builder_end_object (b);
  /* A bundle is named by its manifest's digest: the manifest holds every
   * other file's digest, the chain head and the gate id. */
  json_builder_set_member_name (b, "bundles");
  json_builder_begin_object (b);
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    if (in->arches[a])
      {
        const char *arch = airlock_arch_to_string ((AirlockArch) a);
        g_autofree char *sha = finished_manifest_sha256 (dir, arch);

        json_builder_set_member_name (b, arch);
        if (sha)
          {
            json_builder_begin_object (b);
            airlock_json_set_str (b, "manifest_sha256", sha);
            json_builder_end_object (b);
          }
        else
          json_builder_add_null_value (b);   /* no finished bundle: verify says so */
      }
  json_builder_end_object (b);
  /* A run whose pool host was lost mid-run and that ran again elsewhere
   * (lib/case/run.c) left its first attempt's bundle beside the arch's:
   * named here, or verify would call it foreign. */
  json_builder_set_member_name (b, "attempts");
  json_builder_begin_object (b);
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    if (in->arches[a])
      {
        g_autofree char *name = g_strconcat (airlock_arch_to_string ((AirlockArch) a),
                                             AIRLOCK_BUNDLE_ATTEMPT_SUFFIX, NULL);
        g_autofree char *sub = g_build_filename (dir, name, NULL);
        g_autofree char *sha = NULL;

        if (!g_file_test (sub, G_FILE_TEST_IS_DIR) || g_file_test (sub, G_FILE_TEST_IS_SYMLINK))
          continue;
        sha = finished_manifest_sha256 (dir, name);
        json_builder_set_member_name (b, airlock_arch_to_string ((AirlockArch) a));
        json_builder_begin_object (b);
        airlock_json_set_str (b, "dir", name);
        airlock_json_set_str (b, "manifest_sha256", sha);
        json_builder_end_object (b);
      }
  json_builder_end_object (b);
  json_builder_end_object (b);
  text = airlock_json_builder_to_text (b, TRUE);

  if (!write_new_file (dir, AIRLOCK_BUNDLE_SET_FILE, text, error))
    return FALSE;
  if (in->key)
    {
      g_autofree char *mac = hmac_hex (in->key, text, strlen (text));
      g_autofree char *line = g_strconcat (mac, "\n", NULL);

      if (!write_new_file (dir, AIRLOCK_BUNDLE_SET_HMAC, line, error))
        return FALSE;
    }
  return TRUE;
}

/* ---- verifying ---- */

/* Escaped as a bundle's problems are: set.json's values and the names
 * of the directory's entries are whoever made the set's bytes. */
static void G_GNUC_PRINTF (3, 4)
set_problem (AirlockBundleSetReport *r, const char *file, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  airlock_bundle_problem_addv (r->problems, file, fmt, ap);
  va_end (ap);
}

void
airlock_bundle_set_report_free (AirlockBundleSetReport *report)
{
  if (!report)
    return;
  g_ptr_array_unref (report->problems);
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      airlock_bundle_report_free (report->bundles[a]);
      airlock_bundle_report_free (report->attempts[a]);
    }
  g_free (report->gate_id);
  g_free (report);
}

/* @name in @dirfd, a regular file of at most SET_RECORD_MAX bytes, or NULL
 * with errno set (ENOENT: missing) and *@ret_why saying why (transfer full). */
static GBytes *
read_small (int dirfd, const char *name, char **ret_why)
{
  return airlock_read_at_bounded (dirfd, name, SET_RECORD_MAX, FALSE, "verify", NULL, ret_why);
}

static void
check_set_hmac (AirlockBundleSetReport *r, int dirfd, GBytes *record, GBytes *key)
{
  g_autofree char *why = NULL;
  g_autoptr (GBytes) recorded = read_small (dirfd, AIRLOCK_BUNDLE_SET_HMAC, &why);
  gboolean missing = !recorded && errno == ENOENT;
  g_autofree char *want = NULL;
  g_autofree char *line = NULL;
  guint8 diff = 0;
  gsize n;

  r->hmac_present = recorded != NULL;
  if (!key)
    return;
  if (!recorded && !missing)
    {
      set_problem (r, AIRLOCK_BUNDLE_SET_HMAC, "%s: the set record's signature cannot be checked",
                   why);
      return;
    }
  if (!recorded)
    {
      set_problem (r, AIRLOCK_BUNDLE_SET_HMAC, "is missing: the set record is not signed, so a "
                   "key cannot show it is the gate's");
      return;
    }
  want = hmac_hex (key, g_bytes_get_data (record, NULL), g_bytes_get_size (record));
  line = g_strstrip (g_strndup (g_bytes_get_data (recorded, NULL), g_bytes_get_size (recorded)));
  n = strlen (want);
  /* Constant time: the comparison must not say how much of it matched. */
  if (strlen (line) != n)
    diff = 1;
  for (gsize i = 0; i < n && i < strlen (line); i++)
    diff |= (guint8) (line[i] ^ want[i]);
  if (diff)
    set_problem (r, AIRLOCK_BUNDLE_SET_HMAC, "does not match set.json under the key given: the "
                 "set record was changed, or signed with another key");
  else
    r->hmac_checked = TRUE;
}

/* Everything the set says of itself, or FALSE (a problem recorded). */
typedef struct {
  const char *gate;
  const char *reference;
  const char *index;
  JsonObject *bundles;
  JsonObject *attempts;          /* or NULL: a set without one */
} SetRecord;

static gboolean
parse_set (AirlockBundleSetReport *r, JsonNode *root, SetRecord *set)
{
  JsonObject *o, *image;
  JsonArray *arches;
  guint8 id[GATE_ID_BYTES];

  if (!root || !JSON_NODE_HOLDS_OBJECT (root))
    {
      set_problem (r, AIRLOCK_BUNDLE_SET_FILE, "is not a JSON object");
      return FALSE;
    }
  o = json_node_get_object (root);
  if (g_strcmp0 (airlock_json_get_string (o, "set"), AIRLOCK_BUNDLE_SET_FORMAT) != 0)
    {
      set_problem (r, AIRLOCK_BUNDLE_SET_FILE, "is not an %s record", AIRLOCK_BUNDLE_SET_FORMAT);
      return FALSE;
    }
  set->gate = airlock_json_get_string (o, "gate");
  if (!airlock_hex_decode (set->gate, id, sizeof id))
    {
      set_problem (r, AIRLOCK_BUNDLE_SET_FILE, "has no gate id of %d hex digits", GATE_ID_BYTES * 2);
      return FALSE;
    }
  image = airlock_json_get_object (o, "image");
  set->bundles = airlock_json_get_object (o, "bundles");
  arches = airlock_json_get_array (o, "arches");
  if (!image || !set->bundles || !arches || json_array_get_length (arches) == 0)
    {
      set_problem (r, AIRLOCK_BUNDLE_SET_FILE, "lacks its image, its arches or its bundles");
      return FALSE;
    }
  set->attempts = airlock_json_get_object (o, "attempts");
  set->reference = airlock_json_get_string (image, "reference");
  set->index = airlock_json_get_string (image, "index");
  for (guint i = 0; i < json_array_get_length (arches); i++)
    {
      JsonNode *n = json_array_get_element (arches, i);
      const char *name = JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
                             ? json_node_get_string (n) : NULL;
      AirlockArch arch;

      if (!name || !airlock_arch_from_string (name, &arch) || r->asked[arch])
        {
          set_problem (r, AIRLOCK_BUNDLE_SET_FILE, "arch %u is not a known arch named once", i + 1);
          return FALSE;
        }
      r->asked[arch] = TRUE;
    }
  r->gate_id = g_strdup (set->gate);
  return TRUE;
}

/* One bundle of the set, @name in @dir (an arch's, or its lost first
 * attempt's): verified, then held against the set and its entry there
 * (NULL: none). */
static AirlockBundleReport *
check_bundle (AirlockBundleSetReport *r, const char *dir, const char *name, AirlockArch arch,
              JsonNode *entry, const SetRecord *set, GBytes *key)
{
  const char *arch_name = airlock_arch_to_string (arch);
  g_autofree char *sub = g_build_filename (dir, name, NULL);
  g_autofree char *file = g_strconcat (name, "/manifest.json", NULL);
  const char *want_sha = entry && JSON_NODE_HOLDS_OBJECT (entry)
                             ? airlock_json_get_string (json_node_get_object (entry), "manifest_sha256")
                             : NULL;
  AirlockBundleReport *b;

  if (!want_sha)
    set_problem (r, name, "the gate wrote no finished bundle for %s (set.json names none): "
                 "the set is not whole", name);
  if (!g_file_test (sub, G_FILE_TEST_IS_DIR) || g_file_test (sub, G_FILE_TEST_IS_SYMLINK))
    {
      set_problem (r, name, "is missing: the set asks for %s, and a gate's bundles verify only "
                   "together", name);
      return NULL;
    }
  b = airlock_bundle_verify (sub, key);
  /* Each comparison names the likeliest cause; the digest alone would
   * catch them all, the others say what happened. */
  if (g_strcmp0 (b->arch, arch_name) != 0)
    set_problem (r, file, "is the bundle of arch '%s', under %s/: a bundle moved or copied from "
                 "another arch", b->arch ? b->arch : "(none)", name);
  if (!b->gate_id)
    set_problem (r, file, "names no gate: a bundle of a single run, not of gate %s", set->gate);
  else if (!g_str_equal (b->gate_id, set->gate))
    set_problem (r, file, "belongs to gate %s; the set is gate %s: a bundle from another gate",
                 b->gate_id, set->gate);
  if (g_strcmp0 (b->index_digest, set->index) != 0 || g_strcmp0 (b->reference, set->reference) != 0)
    set_problem (r, file, "is bound to image '%s' (index %s); the set to '%s' (index %s): a "
                 "bundle of another image",
                 b->reference ? b->reference : "(none)", b->index_digest ? b->index_digest : "(none)",
                 set->reference ? set->reference : "(none)", set->index ? set->index : "(none)");
  if (want_sha && g_strcmp0 (b->manifest_sha256, want_sha) != 0)
    set_problem (r, file, "has sha256 %s; set.json names %s for %s: the bundle was replaced or "
                 "rewritten after the gate",
                 b->manifest_sha256 ? b->manifest_sha256 : "(unreadable)", want_sha, name);
  return b;
}

static JsonNode *
member_of (JsonObject *o, const char *name)
{
  return o && json_object_has_member (o, name) ? json_object_get_member (o, name) : NULL;
}

/* One asked-for arch: its bundle, and the bundle of its first attempt
 * when the set names one.  That one must say why it was not the arch's
 * verdict: an attempt that passed is no lost attempt. */
static void
check_member (AirlockBundleSetReport *r, const char *dir, AirlockArch arch, const SetRecord *set,
              GBytes *key)
{
  const char *name = airlock_arch_to_string (arch);
  JsonNode *attempt = member_of (set->attempts, name);
  g_autofree char *attempt_dir = g_strconcat (name, AIRLOCK_BUNDLE_ATTEMPT_SUFFIX, NULL);

  r->bundles[arch] = check_bundle (r, dir, name, arch, member_of (set->bundles, name), set, key);
  if (!attempt)
    return;
  if (!JSON_NODE_HOLDS_OBJECT (attempt)
      || g_strcmp0 (airlock_json_get_string (json_node_get_object (attempt), "dir"),
                    attempt_dir) != 0)
    {
      set_problem (r, AIRLOCK_BUNDLE_SET_FILE, "names a first attempt of %s that is not in %s/",
                   name, attempt_dir);
      return;
    }
  r->attempts[arch] = check_bundle (r, dir, attempt_dir, arch, attempt, set, key);
  if (r->attempts[arch] && g_strcmp0 (r->attempts[arch]->verdict, "inconclusive") != 0)
    set_problem (r, attempt_dir, "is a first attempt whose verdict is '%s', not inconclusive: "
                 "a run that ended is never made again",
                 r->attempts[arch]->verdict ? r->attempts[arch]->verdict : "(none)");
}

/* @entry is a first attempt's directory that the set names (and that
 * check_member() verified). */
static gboolean
is_named_attempt (AirlockBundleSetReport *r, const char *entry)
{
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    if (r->attempts[a])
      {
        g_autofree char *name = g_strconcat (airlock_arch_to_string ((AirlockArch) a),
                                             AIRLOCK_BUNDLE_ATTEMPT_SUFFIX, NULL);

        if (g_str_equal (entry, name))
          return TRUE;
      }
  return FALSE;
}

gboolean
airlock_bundle_dir_is_set (const char *dir)
{
  g_autofree char *record = g_build_filename (dir, AIRLOCK_BUNDLE_SET_FILE, NULL);

  if (g_file_test (record, G_FILE_TEST_EXISTS))
    return TRUE;
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      g_autofree char *sub = g_build_filename (dir, airlock_arch_to_string ((AirlockArch) a), NULL);

      if (g_file_test (sub, G_FILE_TEST_IS_DIR))
        return TRUE;
    }
  return FALSE;
}

AirlockBundleSetReport *
airlock_bundle_set_verify (const char *dir, GBytes *key)
{
  g_autoptr (AirlockBundleSetReport) r = g_new0 (AirlockBundleSetReport, 1);
  g_autoptr (GBytes) record = NULL;
  g_autoptr (JsonNode) root = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GDir) d = NULL;
  g_autofree char *why = NULL;
  SetRecord set = { NULL };
  const char *entry;
  int dirfd;

  r->problems = g_ptr_array_new_with_free_func (airlock_bundle_problem_free);
  if (key && !airlock_bundle_key_check (key, "the key given", &error))
    {
      set_problem (r, NULL, "%s", error->message);
      return g_steal_pointer (&r);
    }
  dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    {
      set_problem (r, NULL, "cannot open the gate's directory '%s': %s", dir, g_strerror (errno));
      return g_steal_pointer (&r);
    }
  record = read_small (dirfd, AIRLOCK_BUNDLE_SET_FILE, &why);
  if (!record)
    {
      set_problem (r, AIRLOCK_BUNDLE_SET_FILE, "%s: without the set record the bundles in '%s' "
                   "cannot be checked as one gate's", why, dir);
      close (dirfd);
      /* Still check what is there, so the report shows each bundle. */
      for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
        {
          g_autofree char *sub = g_build_filename (dir, airlock_arch_to_string ((AirlockArch) a), NULL);

          if (g_file_test (sub, G_FILE_TEST_IS_DIR))
            r->bundles[a] = airlock_bundle_verify (sub, key);
        }
      return g_steal_pointer (&r);
    }
  /* First: the signature is over the bytes, whatever they parse to. */
  check_set_hmac (r, dirfd, record, key);
  close (dirfd);
  root = airlock_json_parse_bounded (g_bytes_get_data (record, NULL), g_bytes_get_size (record),
                                     NULL, &error);
  if (!root)
    {
      set_problem (r, AIRLOCK_BUNDLE_SET_FILE, "is not valid JSON: %s", error->message);
      return g_steal_pointer (&r);
    }
  if (!parse_set (r, root, &set))
    return g_steal_pointer (&r);

  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    if (r->asked[a])
      check_member (r, dir, (AirlockArch) a, &set, key);

  /* Nothing but the set: an extra bundle would read as part of it. */
  d = g_dir_open (dir, 0, NULL);
  while (d && (entry = g_dir_read_name (d)))
    {
      AirlockArch arch;

      if (g_str_equal (entry, AIRLOCK_BUNDLE_SET_FILE) || g_str_equal (entry, AIRLOCK_BUNDLE_SET_HMAC)
          || (airlock_arch_from_string (entry, &arch) && r->asked[arch])
          || is_named_attempt (r, entry))
        continue;
      set_problem (r, entry, "is not part of the set (set.json names only %s%s%s): an extra "
                   "bundle or file", r->asked[AIRLOCK_ARCH_AMD64] ? "amd64" : "",
                   r->asked[AIRLOCK_ARCH_AMD64] && r->asked[AIRLOCK_ARCH_ARM64] ? " and " : "",
                   r->asked[AIRLOCK_ARCH_ARM64] ? "arm64" : "");
    }
  return g_steal_pointer (&r);
}
