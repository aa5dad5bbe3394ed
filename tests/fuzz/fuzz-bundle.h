/* The input format of fuzz-bundle, shared with its seed generator
 * (gen-bundle-corpus.c): a bundle directory as a list of entries, each
 *
 *   type (1 byte: FUZZ_BUNDLE_FILE, _SYMLINK or _DIR), name length (1
 *   byte), the name, content length (le32), the content (cut at the
 *   input's end): a file's bytes, a symlink's target
 *
 * A name that is empty, ".", "..", or holds a byte outside [A-Za-z0-9._-]
 * is skipped (the harness writes into one directory of its own); a later
 * entry with the same name is skipped too.  At most FUZZ_BUNDLE_MAX_ENTRIES
 * entries are made. */
#pragma once

#include <glib.h>
#include <string.h>

#define FUZZ_BUNDLE_MAX_ENTRIES 64

/* The key the harness verifies with (and the signed seed is signed with):
 * as long as `airlock gate --key-file` wants. */
#define FUZZ_BUNDLE_KEY "fuzz-bundle-key-0123456789abcdef"

enum {
  FUZZ_BUNDLE_FILE = 0,
  FUZZ_BUNDLE_SYMLINK = 1,
  FUZZ_BUNDLE_DIR = 2,
};

typedef struct {
  guint8 type;
  char name[256];
  const guint8 *data;
  gsize len;
} FuzzBundleEntry;

/* The next entry at *@pos of @data; FALSE at the end of the input. */
static inline gboolean
fuzz_bundle_next (const guint8 *data, gsize size, gsize *pos, FuzzBundleEntry *e)
{
  gsize p = *pos, name_len, len;

  if (size - p < 2)
    return FALSE;
  e->type = data[p];
  name_len = data[p + 1];
  p += 2;
  if (size - p < name_len + 4)
    return FALSE;
  memcpy (e->name, data + p, name_len);
  e->name[name_len] = '\0';
  p += name_len;
  len = (gsize) data[p] | (gsize) data[p + 1] << 8 | (gsize) data[p + 2] << 16
        | (gsize) data[p + 3] << 24;
  p += 4;
  e->data = data + p;
  e->len = MIN (len, size - p);
  *pos = p + e->len;
  return TRUE;
}

static inline gboolean
fuzz_bundle_name_ok (const char *name)
{
  if (!*name || strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
    return FALSE;
  for (const char *c = name; *c; c++)
    if (!g_ascii_isalnum (*c) && *c != '.' && *c != '_' && *c != '-')
      return FALSE;
  return TRUE;
}

static inline void
fuzz_bundle_put (GByteArray *out, guint8 type, const char *name, const void *data, gsize len)
{
  guint8 h[2] = { type, (guint8) strlen (name) };
  guint8 l[4] = { len & 0xff, (len >> 8) & 0xff, (len >> 16) & 0xff, (len >> 24) & 0xff };

  g_byte_array_append (out, h, 2);
  g_byte_array_append (out, (const guint8 *) name, (guint) strlen (name));
  g_byte_array_append (out, l, 4);
  g_byte_array_append (out, data, (guint) len);
}
