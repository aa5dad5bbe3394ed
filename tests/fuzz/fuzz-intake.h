/* The input format of fuzz-intake, shared with gen-intake-corpus: an
 * image as text, which the harness writes into an archive so the fuzzer's
 * effort goes into the JSON (and the digests still match).
 *
 *   TRANSPORT[:TAG]
 *   --- NAME
 *   CONTENT
 *   --- NAME
 *   CONTENT
 *   …
 *
 * The input is cut at every "\n--- ".  The first piece says how to open
 * the archive: the reference is TRANSPORT:ARCHIVE[:TAG] ("oci-archive",
 * "docker-archive:@1").  Each later piece is a file, numbered from 1 in
 * input order: its NAME runs to the first newline, its CONTENT is the rest.
 *
 *   NAME               a regular file of the archive
 *   NAME -> TARGET     a symlink (CONTENT ignored)
 *   NAME => TARGET     a hard link (CONTENT ignored)
 *   /etc/passwd, /etc/group
 *                      not in the archive: the image's files the config's
 *                      User is resolved against
 *   /args              not in the archive: the run's arguments, one a line
 *
 * In a CONTENT, "$N" becomes the lowercase hex SHA-256 of file N's final
 * CONTENT and "#N" its size in decimal, for N (one or two digits) greater
 * than the file's own number: files are made final from the last, so an
 * index refers to the manifests after it, a manifest to its config and
 * layers.  In a NAME or TARGET any N is replaced, the file's own included
 * ("blobs/sha256/$3" names file 3 by its digest).  Anything else is left
 * as written. */
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <glib.h>
#include <string.h>

#define FUZZ_INTAKE_SEPARATOR "\n--- "
#define FUZZ_INTAKE_MAX_FILES 99

/* A lowercase hex SHA-256 and its NUL. */
typedef char FuzzIntakeHex[65];

typedef enum {
  FUZZ_INTAKE_FILE,
  FUZZ_INTAKE_SYMLINK,
  FUZZ_INTAKE_HARDLINK,
} FuzzIntakeKind;

typedef struct {
  char *name;
  char *target;               /* links only */
  FuzzIntakeKind kind;
  GBytes *content;
} FuzzIntakeFile;

typedef struct {
  char *transport;
  char *tag;                  /* NULL: none */
  GPtrArray *files;           /* FuzzIntakeFile *: the archive's members, in order */
  GBytes *passwd;             /* NULL: the image has none */
  GBytes *group;
  GStrv args;                 /* NULL: no arguments */
} FuzzIntakeInput;

static inline void
fuzz_intake_file_free (gpointer data)
{
  FuzzIntakeFile *f = data;

  g_free (f->name);
  g_free (f->target);
  g_bytes_unref (f->content);
  g_free (f);
}

static inline void
fuzz_intake_input_free (FuzzIntakeInput *in)
{
  g_free (in->transport);
  g_free (in->tag);
  g_ptr_array_unref (in->files);
  g_clear_pointer (&in->passwd, g_bytes_unref);
  g_clear_pointer (&in->group, g_bytes_unref);
  g_strfreev (in->args);
  g_free (in);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FuzzIntakeInput, fuzz_intake_input_free)

/* g_bytes_get_data(), but "" rather than NULL for no bytes. */
static inline const guint8 *
fuzz_intake_bytes (GBytes *bytes, gsize *ret_len)
{
  const guint8 *data = g_bytes_get_data (bytes, ret_len);

  return data ? data : (const guint8 *) "";
}

/* Copies @len bytes of @text to @out, replacing "$N" and "#N" for N in
 * (@after, @n].  @hex and @sizes are indexed by file number. */
static inline void
fuzz_intake_substitute (GByteArray *out, const guint8 *text, gsize len, guint after, guint n,
                        FuzzIntakeHex *hex, const gsize *sizes)
{
  gsize i = 0;

  while (i < len)
    {
      guint number = 0;
      gsize digits = 0;

      if (text[i] == '$' || text[i] == '#')
        while (digits < 2 && i + 1 + digits < len && g_ascii_isdigit (text[i + 1 + digits]))
          {
            number = number * 10 + (text[i + 1 + digits] - '0');
            digits++;
          }
      if (digits > 0 && number > after && number <= n)
        {
          char size_text[24];

          if (text[i] == '$')
            g_byte_array_append (out, (const guint8 *) hex[number], 64);
          else
            {
              g_snprintf (size_text, sizeof size_text, "%" G_GSIZE_FORMAT, sizes[number]);
              g_byte_array_append (out, (const guint8 *) size_text, (guint) strlen (size_text));
            }
          i += 1 + digits;
          continue;
        }
      g_byte_array_append (out, text + i, 1);
      i++;
    }
}

static inline char *
fuzz_intake_substitute_name (const char *text, guint n, FuzzIntakeHex *hex, const gsize *sizes)
{
  GByteArray *out = g_byte_array_new ();

  fuzz_intake_substitute (out, (const guint8 *) text, strlen (text), 0, n, hex, sizes);
  g_byte_array_append (out, (const guint8 *) "", 1);
  return (char *) g_byte_array_free (out, FALSE);
}

/* Cuts @data into the template and its files and resolves the
 * placeholders.  Never fails: every input is some image. */
static inline FuzzIntakeInput *
fuzz_intake_parse (const guint8 *data, gsize size)
{
  FuzzIntakeInput *in = g_new0 (FuzzIntakeInput, 1);
  const gsize sep_len = strlen (FUZZ_INTAKE_SEPARATOR);
  g_autoptr (GPtrArray) pieces = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autofree char *template = NULL;
  g_autofree FuzzIntakeHex *hex = NULL;
  g_autofree gsize *sizes = NULL;
  g_autofree char **names = NULL;
  GBytes **contents;
  const char *colon;
  gsize start = 0;
  guint n;

  if (!data)
    data = (const guint8 *) "";
  for (gsize i = 0; i <= size; i++)
    if (i == size || (size - i >= sep_len && memcmp (data + i, FUZZ_INTAKE_SEPARATOR, sep_len) == 0))
      {
        if (pieces->len == FUZZ_INTAKE_MAX_FILES + 1)
          break;
        g_ptr_array_add (pieces, g_bytes_new (data + start, i - start));
        start = i + sep_len;
        i += sep_len - 1;
      }

  template = g_strndup ((const char *) data, g_bytes_get_size (pieces->pdata[0]));
  colon = strchr (template, ':');
  in->transport = colon ? g_strndup (template, colon - template) : g_strdup (template);
  in->tag = colon ? g_strdup (colon + 1) : NULL;
  in->files = g_ptr_array_new_with_free_func (fuzz_intake_file_free);

  n = pieces->len - 1;
  hex = g_new0 (FuzzIntakeHex, n + 1);
  sizes = g_new0 (gsize, n + 1);
  names = g_new0 (char *, n + 1);
  contents = g_new0 (GBytes *, n + 1);
  for (guint i = n; i >= 1; i--)
    {
      gsize len;
      const guint8 *piece = fuzz_intake_bytes (pieces->pdata[i], &len);
      const guint8 *newline = len ? memchr (piece, '\n', len) : NULL;
      gsize name_len = newline ? (gsize) (newline - piece) : len;
      gsize body = newline ? name_len + 1 : len;
      GByteArray *out = g_byte_array_new ();
      g_autofree char *digest = NULL;

      names[i] = g_strndup ((const char *) piece, name_len);
      fuzz_intake_substitute (out, piece + body, len - body, i, n, hex, sizes);
      contents[i] = g_byte_array_free_to_bytes (out);
      digest = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, contents[i]);
      memcpy (hex[i], digest, 65);
      sizes[i] = g_bytes_get_size (contents[i]);
    }

  for (guint i = 1; i <= n; i++)
    {
      FuzzIntakeFile *f;
      char *arrow;

      if (g_str_equal (names[i], "/etc/passwd") || g_str_equal (names[i], "/etc/group"))
        {
          GBytes **slot = names[i][5] == 'p' ? &in->passwd : &in->group;

          g_clear_pointer (slot, g_bytes_unref);
          *slot = contents[i];
        }
      else if (g_str_equal (names[i], "/args"))
        {
          gsize len;
          const guint8 *bytes = fuzz_intake_bytes (contents[i], &len);
          g_autofree char *text = g_strndup ((const char *) bytes, len);

          g_strfreev (in->args);
          in->args = *text ? g_strsplit (text, "\n", -1) : g_new0 (char *, 1);
          g_bytes_unref (contents[i]);
        }
      else
        {
          f = g_new0 (FuzzIntakeFile, 1);
          f->kind = FUZZ_INTAKE_FILE;
          if ((arrow = strstr (names[i], " -> ")) || (arrow = strstr (names[i], " => ")))
            {
              f->kind = arrow[1] == '-' ? FUZZ_INTAKE_SYMLINK : FUZZ_INTAKE_HARDLINK;
              f->target = fuzz_intake_substitute_name (arrow + 4, n, hex, sizes);
              *arrow = '\0';
            }
          f->name = fuzz_intake_substitute_name (names[i], n, hex, sizes);
          f->content = contents[i];
          g_ptr_array_add (in->files, f);
        }
      g_free (names[i]);
    }
  g_free (contents);
  return in;
}

static inline la_ssize_t
fuzz_intake_append (struct archive *a, void *user_data, const void *buffer, size_t length)
{
  g_byte_array_append (user_data, buffer, (guint) length);
  return (la_ssize_t) length;
}

/* The archive of @files, as `tar` or skopeo would write it (pax where a
 * name needs it).  A file libarchive refuses (an empty name) is left out. */
static inline GBytes *
fuzz_intake_archive (GPtrArray *files)
{
  GByteArray *out = g_byte_array_new ();
  struct archive *a = archive_write_new ();

  archive_write_set_format_pax_restricted (a);
  archive_write_set_bytes_per_block (a, 512);
  archive_write_set_bytes_in_last_block (a, 1);
  if (archive_write_open (a, out, NULL, fuzz_intake_append, NULL) != ARCHIVE_OK)
    g_error ("cannot start an archive: %s", archive_error_string (a));
  for (guint i = 0; i < files->len; i++)
    {
      const FuzzIntakeFile *f = files->pdata[i];
      struct archive_entry *e = archive_entry_new ();
      gsize n;
      const void *content = g_bytes_get_data (f->content, &n);

      archive_entry_copy_pathname (e, f->name);
      archive_entry_set_perm (e, 0644);
      if (f->kind == FUZZ_INTAKE_SYMLINK)
        {
          archive_entry_set_filetype (e, AE_IFLNK);
          archive_entry_copy_symlink (e, f->target);
        }
      else if (f->kind == FUZZ_INTAKE_HARDLINK)
        {
          archive_entry_set_filetype (e, AE_IFREG);
          archive_entry_copy_hardlink (e, f->target);
        }
      else
        {
          archive_entry_set_filetype (e, AE_IFREG);
          archive_entry_set_size (e, (la_int64_t) n);
        }
      if (archive_write_header (a, e) == ARCHIVE_OK && f->kind == FUZZ_INTAKE_FILE && n > 0)
        (void) archive_write_data (a, content, n);
      archive_entry_free (e);
    }
  archive_write_close (a);
  archive_write_free (a);
  return g_byte_array_free_to_bytes (out);
}
