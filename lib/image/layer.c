/* Layers on the host: each decompressed layer tar is read twice.  Pass 1
 * reads it to its end (so its digest is verified before anything is
 * decided), then checks every entry against a model of the tree the lower
 * layers built and records what to remove before extraction (whiteouts,
 * replaced entries).  Pass 2 re-encodes the same entries as a plain tar for
 * GNU tar in the libguestfs appliance.  No entry's content touches the
 * host's filesystem: pass 1 discards it, pass 2 streams it into a pipe. */
#define _GNU_SOURCE

#include "config.h"

#include "image/disk-private.h"
#include "image/printable-private.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#define READ_CHUNK (128 * 1024)
#define BLOCK 4096
#define PROGRESS_STEP (1 << 20)

/* Kinds of tree entries. */
#define KIND_DIR 'd'
#define KIND_FILE 'f'        /* regular file, device node, fifo */
#define KIND_SYMLINK 'l'
/* Kinds of layer entries that are not extracted. */
#define KIND_WHITEOUT 'w'    /* .wh.NAME: removes NAME from lower layers */
#define KIND_OPAQUE 'o'      /* .wh..wh..opq: empties its directory's lower contents */
#define KIND_IGNORED 'i'     /* other .wh..wh.* (aufs bookkeeping) */

#define WHITEOUT_PREFIX ".wh."
#define OPAQUE_NAME ".wh..wh..opq"
#define AUFS_META_PREFIX ".wh..wh."

struct _AirlockRootfsModel {
  /* normalised path ("" is the root) → PACK (kind, layer) */
  GHashTable *tree;
};

#define PACK(kind, layer) GUINT_TO_POINTER (((guint) (layer) + 1) << 8 | (guint) (kind))
#define KIND_OF(v) ((char) (GPOINTER_TO_UINT (v) & 0xff))
#define LAYER_OF(v) ((GPOINTER_TO_UINT (v) >> 8) - 1)

typedef struct {
  const char *path;   /* normalised; for a whiteout, the whiteout file itself */
  const char *link;   /* hard link target (normalised), symlink target (raw),
                         whiteout target / opaque directory; else NULL */
  char kind;          /* KIND_*; 'h' for a hard link */
} PlanEntry;

struct _AirlockLayerPlan {
  GStringChunk *strings;
  GArray *entries;          /* PlanEntry, in stream order */
  GPtrArray *removals;      /* char * */
  guint64 tar_bytes;
  guint64 disk_bytes;
};

AirlockRootfsModel *
airlock_rootfs_model_new (void)
{
  AirlockRootfsModel *model = g_new0 (AirlockRootfsModel, 1);

  model->tree = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_hash_table_insert (model->tree, g_strdup (""), PACK (KIND_DIR, 0));
  return model;
}

void
airlock_rootfs_model_free (AirlockRootfsModel *model)
{
  if (!model)
    return;
  g_hash_table_unref (model->tree);
  g_free (model);
}

guint
airlock_rootfs_model_size (AirlockRootfsModel *model)
{
  return g_hash_table_size (model->tree);
}

void
airlock_layer_plan_free (AirlockLayerPlan *plan)
{
  if (!plan)
    return;
  g_string_chunk_free (plan->strings);
  g_array_unref (plan->entries);
  g_ptr_array_unref (plan->removals);
  g_free (plan);
}

GPtrArray *
airlock_layer_plan_get_removals (AirlockLayerPlan *plan)
{
  return plan->removals;
}

guint64
airlock_layer_plan_get_tar_bytes (AirlockLayerPlan *plan)
{
  return plan->tar_bytes;
}

guint64
airlock_layer_plan_get_disk_bytes (AirlockLayerPlan *plan)
{
  return plan->disk_bytes;
}

guint64
airlock_layer_plan_get_entries (AirlockLayerPlan *plan)
{
  return plan->entries->len;
}

/* ---- reading a layer stream through libarchive ---- */

typedef struct {
  GInputStream *in;
  guint8 *buf;
  GError *error;      /* the stream's own failure (digest, I/O), or the bound's */
  guint64 bytes;
  gboolean eof;
  /* The image's size bound (0: none) and the tar bytes of its layers
   * before this one: a layer is cut off at the read that crosses it, so
   * a small compressed blob cannot make us inflate gigabytes of zeros. */
  guint64 image_max;
  guint64 image_before;
} StreamReader;

/* Counts @n more bytes; FALSE with sr->error set once the image's layers
 * have decompressed to more than its bound. */
static gboolean
stream_count (StreamReader *sr, gsize n)
{
  sr->bytes += n;
  if (sr->image_max && sr->image_before + sr->bytes > sr->image_max)
    {
      g_autofree char *shown = g_format_size_full (sr->image_max, G_FORMAT_SIZE_IEC_UNITS);

      g_set_error (&sr->error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_LIMIT,
                   "the image's layers decompress to more than %s (%" G_GUINT64_FORMAT
                   " bytes), the bound on one image's size (--max-image-size, "
                   "AIRLOCK_MAX_IMAGE_SIZE)",
                   shown, sr->image_max);
      return FALSE;
    }
  return TRUE;
}

static la_ssize_t
stream_read_cb (struct archive *a, void *data, const void **ret_buf)
{
  StreamReader *sr = data;
  gssize n;

  if (sr->eof)
    return 0;
  /* The stream failed before, and libarchive asks again: the failure
   * stands (the layer stream's is sticky anyway), and sr->error must not be
   * set a second time. */
  if (sr->error)
    {
      archive_set_error (a, EIO, "%s", sr->error->message);
      return -1;
    }
  n = g_input_stream_read (sr->in, sr->buf, READ_CHUNK, NULL, &sr->error);
  if (n < 0)
    {
      archive_set_error (a, EIO, "%s", sr->error->message);
      return -1;
    }
  if (n == 0)
    sr->eof = TRUE;
  if (!stream_count (sr, n))
    {
      archive_set_error (a, EFBIG, "%s", sr->error->message);
      return -1;
    }
  *ret_buf = sr->buf;
  return n;
}

/* libarchive stops at the tar's end-of-archive blocks; the stream's digest
 * is only checked at the read that reaches its end, so read on to it. */
static gboolean
stream_drain (StreamReader *sr)
{
  /* libarchive can report a clean end after the stream failed under it:
   * input too short for a tar header, whose read ahead reached a digest
   * failure, is taken as an empty archive.  That failure is the result;
   * reading on would set sr->error over it (GLib's "GError set over the
   * top of a previous GError"; found by tests/fuzz/fuzz-layer, seed
   * corpus/layer/short-not-tar, which it scans with a wrong digest too). */
  if (sr->error)
    return FALSE;
  while (!sr->eof)
    {
      gssize n = g_input_stream_read (sr->in, sr->buf, READ_CHUNK, NULL, &sr->error);

      if (n < 0)
        return FALSE;
      if (n == 0)
        sr->eof = TRUE;
      if (!stream_count (sr, n))
        return FALSE;
    }
  return TRUE;
}

static struct archive *
reader_open (StreamReader *sr, GInputStream *stream)
{
  struct archive *a = archive_read_new ();

  sr->in = stream;
  sr->buf = g_malloc (READ_CHUNK);
  archive_read_support_format_tar (a);
  archive_read_support_format_empty (a);
  /* Open errors show at the first header read. */
  (void) archive_read_open (a, sr, NULL, stream_read_cb, NULL);
  return a;
}

static void
reader_clear (StreamReader *sr)
{
  g_clear_pointer (&sr->buf, g_free);
  g_clear_error (&sr->error);
}

/* The error for a failed read: the stream's own (it says which digest did
 * not match), else libarchive's (the bytes are not a tar). */
static gboolean
set_read_error (GError **error, StreamReader *sr, struct archive *a, const char *what)
{
  if (sr->error)
    {
      if (sr->error->domain == AIRLOCK_IMAGE_ERROR)
        g_set_error (error, AIRLOCK_IMAGE_ERROR, sr->error->code, "%s: %s", what, sr->error->message);
      else
        g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_DIGEST,
                     "%s cannot be read: %s", what, sr->error->message);
    }
  else
    g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                 "%s is not a readable tar: %s", what,
                 a && archive_error_string (a) ? archive_error_string (a) : "unknown error");
  return FALSE;
}

/* ---- paths ---- */

/* Normalises a tar member path: drops "./" prefixes, empty and "."
 * components and trailing '/'.  The root itself is "".  Returns NULL with
 * @error set for an absolute path or a ".." component: the appliance's tar
 * would strip a leading '/' itself, but an image that tries either is
 * hostile or broken, and we say so rather than guess. */
static char *
normalise_path (const char *raw, const char *what, const char *role, GError **error)
{
  g_autoptr (GString) out = g_string_new (NULL);
  g_autofree char *shown = NULL;
  const char *p = raw;

  if (!raw || !*raw)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s has an entry with an empty %s", what, role);
      return NULL;
    }
  if (strlen (raw) > AIRLOCK_IMAGE_MAX_PATH)
    {
      shown = airlock_image_printable (raw);
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_LIMIT,
                   "%s: entry %s '%.64s…' is longer than %d bytes", what, role, shown,
                   AIRLOCK_IMAGE_MAX_PATH);
      return NULL;
    }
  if (raw[0] == '/')
    {
      shown = airlock_image_printable (raw);
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_UNSAFE,
                   "%s: entry %s '%s' is an absolute path", what, role, shown);
      return NULL;
    }
  while (*p)
    {
      const char *end = strchrnul (p, '/');
      gsize len = end - p;

      if (len == 2 && p[0] == '.' && p[1] == '.')
        {
          shown = airlock_image_printable (raw);
          g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_UNSAFE,
                       "%s: entry %s '%s' has a '..' component", what, role, shown);
          return NULL;
        }
      if (len > 0 && !(len == 1 && p[0] == '.'))
        {
          if (out->len > 0)
            g_string_append_c (out, '/');
          g_string_append_len (out, p, len);
        }
      p = *end ? end + 1 : end;
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* The parent of @path ("" for a top-level entry); @path must not be "". */
static char *
parent_of (const char *path)
{
  const char *slash = strrchr (path, '/');

  return slash ? g_strndup (path, slash - path) : g_strdup ("");
}

static const char *
base_of (const char *path)
{
  const char *slash = strrchr (path, '/');

  return slash ? slash + 1 : path;
}

/* Checks the proper ancestors of @path in @model: none may be a symlink
 * (the appliance's tar and rm would follow it, and the entry would land
 * elsewhere), and each that exists must be a directory.  @role: "path",
 * "hard link target".  Returns FALSE with @error set. */
static gboolean
check_ancestors (AirlockRootfsModel *model, const char *path, const char *entry_path,
                 const char *role, const char *what, GError **error)
{
  g_autofree char *buf = g_strdup (path);
  char *slash;

  for (slash = strchr (buf, '/'); slash; slash = strchr (slash + 1, '/'))
    {
      gpointer v;

      *slash = '\0';
      if (g_hash_table_lookup_extended (model->tree, buf, NULL, &v))
        {
          g_autofree char *shown = airlock_image_printable (entry_path);
          g_autofree char *shown_anc = airlock_image_printable (buf);

          if (KIND_OF (v) == KIND_SYMLINK)
            {
              g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_UNSAFE,
                           "%s: entry '%s' has a %s through the symlink '%s'", what, shown, role,
                           shown_anc);
              return FALSE;
            }
          if (KIND_OF (v) != KIND_DIR)
            {
              g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                           "%s: entry '%s' has a %s under '%s', which is not a directory", what,
                           shown, role, shown_anc);
              return FALSE;
            }
        }
      *slash = '/';
    }
  return TRUE;
}

/* Removes @path's descendants from the model (not @path itself). */
static void
model_remove_below (AirlockRootfsModel *model, const char *path)
{
  g_autofree char *prefix = g_strconcat (path, "/", NULL);
  GHashTableIter iter;
  gpointer key;

  if (!*path)
    {
      g_hash_table_remove_all (model->tree);
      g_hash_table_insert (model->tree, g_strdup (""), PACK (KIND_DIR, 0));
      return;
    }
  g_hash_table_iter_init (&iter, model->tree);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    if (g_str_has_prefix (key, prefix))
      g_hash_table_iter_remove (&iter);
}

/* Applies the layer's whiteouts to @model (they concern lower layers only,
 * so they come first) and queues the removals on the disk. */
static gboolean
apply_whiteouts (AirlockRootfsModel *model, AirlockLayerPlan *plan, const char *what,
                 GError **error)
{
  g_autoptr (GHashTable) deleted = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) opaque = g_hash_table_new (g_str_hash, g_str_equal);
  GHashTableIter iter;
  gpointer key;
  guint i;

  for (i = 0; i < plan->entries->len; i++)
    {
      PlanEntry *e = &g_array_index (plan->entries, PlanEntry, i);

      if (e->kind != KIND_WHITEOUT && e->kind != KIND_OPAQUE)
        continue;
      /* The whiteout file's own path covers the ancestors of its target
       * (and, for an opaque marker, the directory itself). */
      if (!check_ancestors (model, e->path, e->path, "path", what, error))
        return FALSE;
      g_hash_table_add (e->kind == KIND_WHITEOUT ? deleted : opaque, (gpointer) e->link);
    }
  if (g_hash_table_size (deleted) == 0 && g_hash_table_size (opaque) == 0)
    return TRUE;

  /* One pass over the tree: an entry goes when it or an ancestor is
   * whited out, or an ancestor is an opaque directory.  Only the top of
   * each removed subtree is removed on the disk. */
  g_hash_table_iter_init (&iter, model->tree);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      const char *path = key;
      g_autofree char *buf = NULL;
      gboolean top = FALSE, gone = FALSE;
      char *slash;

      if (!*path)
        continue;
      if (g_hash_table_contains (deleted, path))
        top = gone = TRUE;
      buf = g_strdup (path);
      while (!gone && (slash = strrchr (buf, '/')))
        {
          gboolean is_parent = strlen (buf) == strlen (path);

          *slash = '\0';
          if (g_hash_table_contains (deleted, buf))
            gone = TRUE;
          else if (g_hash_table_contains (opaque, buf))
            top = is_parent, gone = TRUE;
        }
      if (!gone && g_hash_table_contains (opaque, ""))
        top = strchr (path, '/') == NULL, gone = TRUE;
      if (top)
        g_ptr_array_add (plan->removals, g_strdup (path));
      if (gone)
        g_hash_table_iter_remove (&iter);
    }
  return TRUE;
}

static guint64
round_block (guint64 n)
{
  return (n + BLOCK - 1) / BLOCK * BLOCK;
}

/* Checks one extracted entry against @model and applies it. */
static gboolean
apply_entry (AirlockRootfsModel *model, AirlockLayerPlan *plan, const PlanEntry *e,
             guint layer_index, const char *what, GError **error)
{
  g_autofree char *shown = airlock_image_printable (e->path);
  char kind = e->kind;
  gpointer v = NULL;

  if (!check_ancestors (model, e->path, e->path, "path", what, error))
    return FALSE;
  if (kind == 'h')
    {
      g_autofree char *shown_target = airlock_image_printable (e->link);

      if (!check_ancestors (model, e->link, e->path, "hard link target", what, error))
        return FALSE;
      if (!g_hash_table_lookup_extended (model->tree, e->link, NULL, &v) || KIND_OF (v) == KIND_DIR)
        {
          g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                       "%s: entry '%s' is a hard link to '%s', which is %s", what, shown,
                       shown_target, v ? "a directory" : "not in the image");
          return FALSE;
        }
      /* A link to a symlink is another name for that symlink. */
      kind = KIND_OF (v);
    }
  if (!*e->path && kind != KIND_DIR)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: the root entry is not a directory", what);
      return FALSE;
    }

  if (g_hash_table_lookup_extended (model->tree, e->path, NULL, &v))
    {
      char old = KIND_OF (v);
      gboolean retyped = (old == KIND_DIR) != (kind == KIND_DIR)
                         || (old == KIND_SYMLINK) != (kind == KIND_SYMLINK);

      if (retyped && LAYER_OF (v) == layer_index)
        {
          /* Within one layer the extraction order decides, and GNU tar
           * does not replace a directory or a symlink the way an overlay
           * would: refuse rather than build a different tree. */
          g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                       "%s: entry '%s' appears twice with different types", what, shown);
          return FALSE;
        }
      if (retyped)
        {
          /* A lower entry of another kind is replaced whole, as an overlay
           * shows it: remove it first (tar cannot put a file over a
           * non-empty directory, and must never extract through a symlink). */
          g_ptr_array_add (plan->removals, g_strdup (e->path));
          if (old == KIND_DIR)
            model_remove_below (model, e->path);
        }
    }
  else if (*e->path)
    {
      /* tar creates missing parents as directories. */
      g_autofree char *parent = parent_of (e->path);

      while (!g_hash_table_contains (model->tree, parent))
        {
          char *up = parent_of (parent);

          g_hash_table_insert (model->tree, g_steal_pointer (&parent), PACK (KIND_DIR, layer_index));
          parent = up;
        }
    }
  if (g_hash_table_size (model->tree) >= AIRLOCK_IMAGE_MAX_ENTRIES)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_LIMIT,
                   "%s: the image holds more than %d files", what, AIRLOCK_IMAGE_MAX_ENTRIES);
      return FALSE;
    }
  g_hash_table_insert (model->tree, g_strdup (e->path), PACK (kind, layer_index));
  return TRUE;
}

/* What an entry is, or 0 with @error set for a kind a rootfs cannot hold. */
static char
entry_kind (struct archive_entry *entry, const char *path, const char *what, GError **error)
{
  g_autofree char *shown = NULL;

  if (archive_entry_hardlink (entry))
    return 'h';
  switch (archive_entry_filetype (entry))
    {
    case AE_IFDIR:
      return KIND_DIR;
    case AE_IFLNK:
      return KIND_SYMLINK;
    case AE_IFREG:
    case AE_IFCHR:
    case AE_IFBLK:
    case AE_IFIFO:
      return KIND_FILE;
    default:
      shown = airlock_image_printable (path);
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: entry '%s' has a type a root filesystem cannot hold (mode 0%o)", what,
                   shown, (unsigned) archive_entry_filetype (entry));
      return 0;
    }
}

/* Reads one header's identity into @e (strings in @plan->strings). */
static gboolean
describe_entry (struct archive_entry *entry, AirlockLayerPlan *plan, PlanEntry *e,
                const char *what, GError **error)
{
  g_autofree char *path = normalise_path (archive_entry_pathname (entry), what, "path", error);
  const char *base;

  if (!path)
    return FALSE;
  base = base_of (path);
  e->link = NULL;
  if (g_str_has_prefix (base, WHITEOUT_PREFIX))
    {
      g_autofree char *parent = parent_of (path);

      if (g_str_equal (base, OPAQUE_NAME))
        {
          e->kind = KIND_OPAQUE;
          e->link = g_string_chunk_insert_const (plan->strings, parent);
        }
      else if (g_str_has_prefix (base, AUFS_META_PREFIX))
        e->kind = KIND_IGNORED;
      else
        {
          const char *name = base + strlen (WHITEOUT_PREFIX);
          g_autofree char *target = NULL;

          if (!*name || g_str_equal (name, ".") || g_str_equal (name, ".."))
            {
              g_autofree char *shown = airlock_image_printable (path);
              g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_UNSAFE,
                           "%s: whiteout '%s' names no file", what, shown);
              return FALSE;
            }
          target = *parent ? g_strconcat (parent, "/", name, NULL) : g_strdup (name);
          e->kind = KIND_WHITEOUT;
          e->link = g_string_chunk_insert_const (plan->strings, target);
        }
    }
  else
    {
      e->kind = entry_kind (entry, path, what, error);
      if (!e->kind)
        return FALSE;
      if (e->kind == 'h')
        {
          g_autofree char *target = normalise_path (archive_entry_hardlink (entry), what,
                                                    "hard link target", error);
          if (!target)
            return FALSE;
          e->link = g_string_chunk_insert_const (plan->strings, target);
        }
      else if (e->kind == KIND_SYMLINK)
        e->link = g_string_chunk_insert_const (plan->strings,
                                               archive_entry_symlink (entry) ? archive_entry_symlink (entry) : "");
    }
  e->path = g_string_chunk_insert_const (plan->strings, path);
  return TRUE;
}

/* Bytes @entry takes on ext4, erring high: inode, directory entry, data
 * blocks, a block for a long symlink target or for xattrs. */
static guint64
entry_disk_bytes (struct archive_entry *entry, const PlanEntry *e)
{
  guint64 n = 256 + strlen (base_of (e->path)) + 16;
  const char *name;
  const void *value;
  size_t size;
  guint64 xattr_bytes = 0;

  if (e->kind == KIND_FILE && archive_entry_filetype (entry) == AE_IFREG)
    n += round_block (archive_entry_size (entry));
  else if (e->kind == KIND_DIR)
    n += BLOCK;
  else if (e->kind == KIND_SYMLINK && strlen (e->link) >= 60)
    n += BLOCK;
  archive_entry_xattr_reset (entry);
  while (archive_entry_xattr_next (entry, &name, &value, &size) == ARCHIVE_OK)
    xattr_bytes += strlen (name) + size + 32;
  if (xattr_bytes)
    n += round_block (xattr_bytes);
  return n;
}

AirlockLayerPlan *
airlock_layer_scan (GInputStream *stream, guint layer_index, AirlockRootfsModel *model,
                    guint64 image_bytes_before, guint64 image_max_bytes, const char *what,
                    GError **error)
{
  g_autoptr (AirlockLayerPlan) plan = g_new0 (AirlockLayerPlan, 1);
  StreamReader sr = { .image_max = image_max_bytes, .image_before = image_bytes_before };
  struct archive *a;
  struct archive_entry *entry;
  gboolean ok = FALSE;
  guint i;
  int r;

  plan->strings = g_string_chunk_new (64 * 1024);
  plan->entries = g_array_new (FALSE, FALSE, sizeof (PlanEntry));
  plan->removals = g_ptr_array_new_with_free_func (g_free);

  a = reader_open (&sr, stream);
  while ((r = archive_read_next_header (a, &entry)) == ARCHIVE_OK || r == ARCHIVE_WARN)
    {
      PlanEntry e = { 0 };

      if (!describe_entry (entry, plan, &e, what, error))
        goto out;
      if (plan->entries->len >= AIRLOCK_IMAGE_MAX_ENTRIES)
        {
          g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_LIMIT,
                       "%s holds more than %d entries", what, AIRLOCK_IMAGE_MAX_ENTRIES);
          goto out;
        }
      g_array_append_val (plan->entries, e);
      if (e.kind != KIND_WHITEOUT && e.kind != KIND_OPAQUE && e.kind != KIND_IGNORED && e.kind != 'h')
        plan->disk_bytes += entry_disk_bytes (entry, &e);
      else
        plan->disk_bytes += 256;
      /* Reading on (not skipping) is what feeds the digest. */
      if (archive_read_data_skip (a) != ARCHIVE_OK)
        {
          set_read_error (error, &sr, a, what);
          goto out;
        }
    }
  if (r != ARCHIVE_EOF || !stream_drain (&sr))
    {
      set_read_error (error, &sr, a, what);
      goto out;
    }
  plan->tar_bytes = sr.bytes;

  /* The bytes are the ones the digest names: now judge them. */
  if (!apply_whiteouts (model, plan, what, error))
    goto out;
  for (i = 0; i < plan->entries->len; i++)
    {
      const PlanEntry *e = &g_array_index (plan->entries, PlanEntry, i);

      if (e->kind == KIND_WHITEOUT || e->kind == KIND_OPAQUE || e->kind == KIND_IGNORED)
        continue;
      if (!apply_entry (model, plan, e, layer_index, what, error))
        goto out;
    }
  ok = TRUE;

out:
  archive_read_free (a);
  reader_clear (&sr);
  return ok ? g_steal_pointer (&plan) : NULL;
}

/* ---- pass 2: re-encoding for the appliance ---- */

typedef struct {
  int fd;             /* -1 once the copy failed: nothing more is written */
  int saved_errno;
} FdWriter;

static la_ssize_t
fd_write_cb (struct archive *a, void *data, const void *buf, size_t len)
{
  FdWriter *w = data;
  const char *p = buf;
  size_t left = len;

  if (w->fd < 0)
    {
      archive_set_error (a, EPIPE, "the copy was abandoned");
      return -1;
    }
  while (left > 0)
    {
      ssize_t n = write (w->fd, p, left);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          w->saved_errno = errno;
          archive_set_error (a, errno, "%s", g_strerror (errno));
          return -1;
        }
      p += n;
      left -= n;
    }
  return len;
}

static gboolean
same_entry (const PlanEntry *a, const PlanEntry *b)
{
  return a->kind == b->kind && g_strcmp0 (a->path, b->path) == 0 && g_strcmp0 (a->link, b->link) == 0;
}

/* The header the appliance's tar gets for @entry. */
static struct archive_entry *
encode_entry (struct archive_entry *entry, const PlanEntry *e)
{
  struct archive_entry *out = archive_entry_clone (entry);

  archive_entry_copy_pathname (out, *e->path ? e->path : ".");
  /* GNU tar maps user and group names through the appliance's own
   * /etc/passwd; without names it uses the numbers, as a container
   * runtime does. */
  archive_entry_copy_uname (out, NULL);
  archive_entry_copy_gname (out, NULL);
  archive_entry_sparse_clear (out);
  archive_entry_set_fflags (out, 0, 0);
  archive_entry_acl_clear (out);
  if (e->kind == 'h')
    {
      archive_entry_copy_hardlink (out, e->link);
      archive_entry_set_size (out, 0);
    }
  else if (archive_entry_filetype (out) != AE_IFREG)
    archive_entry_set_size (out, 0);
  return out;
}

static gboolean
copy_entries (struct archive *r, struct archive *w, StreamReader *sr, FdWriter *fw,
              AirlockLayerPlan *plan, const char *what, AirlockLayerCopyProgress progress,
              gpointer progress_data, GError **error)
{
  g_autofree guint8 *buf = g_malloc (READ_CHUNK);
  g_autoptr (AirlockLayerPlan) seen = g_new0 (AirlockLayerPlan, 1);
  struct archive_entry *entry;
  guint64 reported = 0;
  guint index = 0;
  int ret;

  seen->strings = g_string_chunk_new (4096);
  seen->entries = g_array_new (FALSE, FALSE, sizeof (PlanEntry));
  seen->removals = g_ptr_array_new ();

  while ((ret = archive_read_next_header (r, &entry)) == ARCHIVE_OK || ret == ARCHIVE_WARN)
    {
      PlanEntry e = { 0 };
      struct archive_entry *out;
      la_ssize_t n;

      if (!describe_entry (entry, seen, &e, what, error))
        return FALSE;
      if (index >= plan->entries->len
          || !same_entry (&e, &g_array_index (plan->entries, PlanEntry, index)))
        {
          g_autofree char *shown = airlock_image_printable (e.path);
          g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                       "%s changed while it was read: entry %u is now '%s'", what, index + 1, shown);
          return FALSE;
        }
      index++;
      /* The removals were made on the disk before this copy. */
      if (e.kind == KIND_WHITEOUT || e.kind == KIND_OPAQUE || e.kind == KIND_IGNORED)
        goto skip;
      out = encode_entry (entry, &e);
      ret = archive_write_header (w, out);
      archive_entry_free (out);
      if (ret != ARCHIVE_OK && ret != ARCHIVE_WARN)
        goto write_error;
      if (archive_entry_size (entry) > 0 && e.kind == KIND_FILE
          && archive_entry_filetype (entry) == AE_IFREG)
        {
          while ((n = archive_read_data (r, buf, READ_CHUNK)) > 0)
            {
              if (archive_write_data (w, buf, n) != n)
                goto write_error;
              if (progress && sr->bytes - reported >= PROGRESS_STEP)
                {
                  reported = sr->bytes;
                  progress (sr->bytes, progress_data);
                }
            }
          if (n < 0)
            return set_read_error (error, sr, r, what);
        }
      if (archive_write_finish_entry (w) != ARCHIVE_OK)
        goto write_error;
      if (progress && sr->bytes - reported >= PROGRESS_STEP)
        {
          reported = sr->bytes;
          progress (sr->bytes, progress_data);
        }
    skip:
      if (archive_read_data_skip (r) != ARCHIVE_OK)
        return set_read_error (error, sr, r, what);
      /* Each header's strings only matter for this comparison. */
      g_string_chunk_clear (seen->strings);
    }
  if (ret != ARCHIVE_EOF || !stream_drain (sr))
    return set_read_error (error, sr, r, what);
  if (index != plan->entries->len)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s changed while it was read: %u entries instead of %u", what, index,
                   plan->entries->len);
      return FALSE;
    }
  /* Only now, with the digest checked, does the tar get its end. */
  if (archive_write_close (w) != ARCHIVE_OK)
    goto write_error;
  if (progress)
    progress (sr->bytes, progress_data);
  return TRUE;

write_error:
  if (fw->saved_errno)
    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (fw->saved_errno),
                 "cannot send %s to the appliance: %s", what, g_strerror (fw->saved_errno));
  else
    g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                 "cannot re-encode %s: %s", what, archive_error_string (w));
  return FALSE;
}

gboolean
airlock_layer_copy (GInputStream *stream, AirlockLayerPlan *plan, int fd, const char *what,
                    AirlockLayerCopyProgress progress, gpointer progress_data, GError **error)
{
  StreamReader sr = { 0 };
  FdWriter fw = { .fd = fd };
  struct archive *r, *w;
  sigset_t sigpipe, old_mask, pending;
  gboolean ok;

  /* A reader that goes away (the appliance's tar failed) must show as
   * EPIPE here, not kill the process: block SIGPIPE in this thread and
   * swallow one that arrives, as the caller's mask and signals are not
   * ours to change. */
  sigemptyset (&sigpipe);
  sigaddset (&sigpipe, SIGPIPE);
  pthread_sigmask (SIG_BLOCK, &sigpipe, &old_mask);

  r = reader_open (&sr, stream);
  w = archive_write_new ();
  archive_write_set_format_pax_restricted (w);
  archive_write_set_bytes_per_block (w, 64 * 1024);
  archive_write_set_bytes_in_last_block (w, 1);
  ok = archive_write_open (w, &fw, NULL, fd_write_cb, NULL) == ARCHIVE_OK
       && copy_entries (r, w, &sr, &fw, plan, what, progress, progress_data, error);
  if (!ok && error && !*error)
    g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                 "cannot re-encode %s: %s", what, archive_error_string (w));
  /* archive_write_free() closes an open writer, which would write the
   * end-of-archive blocks and make a cut-short layer look whole to tar. */
  if (!ok)
    fw.fd = -1;
  archive_write_free (w);
  archive_read_free (r);
  reader_clear (&sr);

  sigpending (&pending);
  if (sigismember (&pending, SIGPIPE) && !sigismember (&old_mask, SIGPIPE))
    {
      const struct timespec zero = { 0 };
      (void) sigtimedwait (&sigpipe, NULL, &zero);
    }
  pthread_sigmask (SIG_SETMASK, &old_mask, NULL);
  return ok;
}
