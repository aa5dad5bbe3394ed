/* Guest images: the newc writer, kernel formats, module closure, the recipe
 * and the cached build pipeline (with a custom kernel, so no network). */
#define _GNU_SOURCE

#include "config.h"

#include <airlock.h>

#include "fsutil-private.h"
#include "guestimg/bzimage-private.h"
#include "guestimg/cpio-private.h"
#include "guestimg/kernel-bpf-private.h"
#include "guestimg/modules-private.h"
#include "guestimg/package-private.h"
#include "guestimg/transfer-private.h"
#include "guestimg/recipe-private.h"

#include <archive.h>
#include <archive_entry.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <lzma.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define TEST_RELEASE "9.9.9-test"

/* ---- helpers ------------------------------------------------------------ */

static void
put_le16 (guint8 *p, guint16 v)
{
  p[0] = v & 0xff;
  p[1] = v >> 8;
}

static void
put_le32 (guint8 *p, guint32 v)
{
  for (int i = 0; i < 4; i++)
    p[i] = (v >> (8 * i)) & 0xff;
}

static void
put_le64 (guint8 *p, guint64 v)
{
  for (int i = 0; i < 8; i++)
    p[i] = (v >> (8 * i)) & 0xff;
}

static void
write_file (const char *dir, const char *name, const char *contents)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GError) error = NULL;

  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
}

/* ---- a newc reader, written from the format, not from our writer -------- */

typedef struct {
  char *name;
  guint32 ino, mode, uid, gid, nlink, mtime, filesize, devmajor, devminor, rdevmajor, rdevminor,
    namesize, check;
  GBytes *data;
} NewcEntry;

static void
newc_entry_free (gpointer p)
{
  NewcEntry *e = p;

  g_free (e->name);
  g_bytes_unref (e->data);
  g_free (e);
}

static guint32
hex8 (const guint8 *p)
{
  guint32 v = 0;

  for (int i = 0; i < 8; i++)
    {
      int d = g_ascii_xdigit_value (p[i]);
      g_assert_cmpint (d, >=, 0);
      v = (v << 4) | d;
    }
  return v;
}

/* Parses a whole archive, asserting the framing as it goes: magic, 4-byte
 * alignment of every header and every data block, zero padding, the
 * trailer, and nothing after it.  Returns the entries before the trailer. */
static GPtrArray *
newc_parse (const guint8 *buf, gsize len)
{
  GPtrArray *entries = g_ptr_array_new_with_free_func (newc_entry_free);
  gsize pos = 0;

  for (;;)
    {
      NewcEntry *e = g_new0 (NewcEntry, 1);
      guint32 *fields[] = { &e->ino, &e->mode, &e->uid, &e->gid, &e->nlink, &e->mtime,
                            &e->filesize, &e->devmajor, &e->devminor, &e->rdevmajor,
                            &e->rdevminor, &e->namesize, &e->check };
      gsize name_end, data_end;

      g_assert_cmpuint (pos % 4, ==, 0);
      g_assert_cmpuint (pos + 110, <=, len);
      g_assert_cmpmem (buf + pos, 6, "070701", 6);
      for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
        *fields[i] = hex8 (buf + pos + 6 + 8 * i);
      g_assert_cmpuint (e->namesize, >, 1);
      name_end = pos + 110 + e->namesize;
      g_assert_cmpuint (name_end, <=, len);
      g_assert_cmpint (buf[name_end - 1], ==, '\0');
      e->name = g_strndup ((const char *) buf + pos + 110, e->namesize - 1);
      g_assert_cmpuint (strlen (e->name), ==, e->namesize - 1);
      /* Name padding: zeros up to the next multiple of 4. */
      for (pos = name_end; pos % 4; pos++)
        g_assert_cmpint (buf[pos], ==, 0);
      data_end = pos + e->filesize;
      g_assert_cmpuint (data_end, <=, len);
      e->data = g_bytes_new (buf + pos, e->filesize);
      for (pos = data_end; pos % 4; pos++)
        {
          g_assert_cmpuint (pos, <, len);
          g_assert_cmpint (buf[pos], ==, 0);
        }
      if (g_str_equal (e->name, "TRAILER!!!"))
        {
          g_assert_cmpuint (e->filesize, ==, 0);
          newc_entry_free (e);
          break;
        }
      g_ptr_array_add (entries, e);
    }
  g_assert_cmpuint (pos, ==, len);
  return entries;
}

static NewcEntry *
newc_find (GPtrArray *entries, const char *name)
{
  for (guint i = 0; i < entries->len; i++)
    if (g_str_equal (((NewcEntry *) entries->pdata[i])->name, name))
      return entries->pdata[i];
  return NULL;
}

static GBytes *
cpio_to_bytes (AirlockCpio *cpio)
{
  g_autoptr (GOutputStream) out = g_memory_output_stream_new_resizable ();
  g_autoptr (GError) error = NULL;

  g_assert_true (airlock_cpio_write (cpio, out, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_output_stream_close (out, NULL, NULL));
  return g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (out));
}

/* ---- cpio --------------------------------------------------------------- */

static const struct {
  const char *path;
  guint mode;
  const char *data;
} cpio_files[] = {
  /* Sizes 0..5 exercise every padding length. */
  { "lib/modules/" TEST_RELEASE "/kernel/fs/ext4/ext4.ko", 0644, "ext4!" },
  { "init", 0755, "#!" },
  { "lib/modules/load.list", 0644, "" },
  { "lib/modules/" TEST_RELEASE "/modules.dep", 0644, "dep" },
  { "lib/modules/" TEST_RELEASE "/kernel/a.ko", 0644, "a" },
  { "airlock/supervisor", 0755, "four" },
};

static AirlockCpio *
make_test_cpio (gboolean reversed)
{
  AirlockCpio *cpio = airlock_cpio_new ();
  guint n = G_N_ELEMENTS (cpio_files);

  for (guint k = 0; k < n; k++)
    {
      guint i = reversed ? n - 1 - k : k;
      g_autoptr (GBytes) data = g_bytes_new_static (cpio_files[i].data, strlen (cpio_files[i].data));
      g_autoptr (GError) error = NULL;

      g_assert_true (airlock_cpio_add_bytes (cpio, cpio_files[i].path, cpio_files[i].mode, data, &error));
      g_assert_no_error (error);
    }
  return cpio;
}

static void
test_cpio_entries (void)
{
  g_autoptr (AirlockCpio) cpio = make_test_cpio (FALSE);
  g_autoptr (GBytes) archive = cpio_to_bytes (cpio);
  g_autoptr (GPtrArray) entries = newc_parse (g_bytes_get_data (archive, NULL),
                                              g_bytes_get_size (archive));
  static const char *const expected_dirs[] = {
    "airlock", "lib", "lib/modules", "lib/modules/" TEST_RELEASE,
    "lib/modules/" TEST_RELEASE "/kernel", "lib/modules/" TEST_RELEASE "/kernel/fs",
    "lib/modules/" TEST_RELEASE "/kernel/fs/ext4",
  };

  g_assert_cmpuint (entries->len, ==, G_N_ELEMENTS (cpio_files) + G_N_ELEMENTS (expected_dirs));
  g_assert_cmpuint (airlock_cpio_n_entries (cpio), ==, entries->len);

  for (guint i = 0; i < entries->len; i++)
    {
      NewcEntry *e = entries->pdata[i];
      const char *slash = strrchr (e->name, '/');

      /* Sorted, numbered in order, nothing from the host. */
      if (i > 0)
        g_assert_cmpstr (((NewcEntry *) entries->pdata[i - 1])->name, <, e->name);
      g_assert_cmpuint (e->ino, ==, i + 1);
      g_assert_cmpuint (e->uid, ==, 0);
      g_assert_cmpuint (e->gid, ==, 0);
      g_assert_cmpuint (e->mtime, ==, 0);
      g_assert_cmpuint (e->devmajor | e->devminor | e->rdevmajor | e->rdevminor | e->check, ==, 0);
      g_assert_false (e->name[0] == '/');
      /* Every parent is listed before its children. */
      if (slash)
        {
          g_autofree char *parent = g_strndup (e->name, slash - e->name);
          NewcEntry *p = newc_find (entries, parent);
          g_assert_nonnull (p);
          g_assert_cmpuint (p->ino, <, e->ino);
        }
    }
  for (guint i = 0; i < G_N_ELEMENTS (expected_dirs); i++)
    {
      NewcEntry *d = newc_find (entries, expected_dirs[i]);
      g_assert_nonnull (d);
      g_assert_cmpuint (d->mode, ==, S_IFDIR | 0755);
      g_assert_cmpuint (d->nlink, ==, 2);
      g_assert_cmpuint (d->filesize, ==, 0);
    }
  for (guint i = 0; i < G_N_ELEMENTS (cpio_files); i++)
    {
      NewcEntry *f = newc_find (entries, cpio_files[i].path);
      g_assert_nonnull (f);
      g_assert_cmpuint (f->mode, ==, S_IFREG | cpio_files[i].mode);
      g_assert_cmpuint (f->nlink, ==, 1);
      g_assert_cmpmem (g_bytes_get_data (f->data, NULL), g_bytes_get_size (f->data),
                       cpio_files[i].data, strlen (cpio_files[i].data));
    }
}

static void
test_cpio_reproducible (void)
{
  g_autoptr (AirlockCpio) a = make_test_cpio (FALSE);
  g_autoptr (AirlockCpio) b = make_test_cpio (TRUE);
  g_autoptr (GBytes) archive_a = cpio_to_bytes (a);
  g_autoptr (GBytes) archive_b = cpio_to_bytes (b);
  g_autoptr (GBytes) again = cpio_to_bytes (a);

  g_assert_true (g_bytes_equal (archive_a, archive_b));
  g_assert_true (g_bytes_equal (archive_a, again));
}

static void
test_cpio_file_source (void)
{
  g_autofree char *dir = g_dir_make_tmp ("airlock-test-XXXXXX", NULL);
  g_autofree char *src = g_build_filename (dir, "prog", NULL);
  g_autoptr (AirlockCpio) cpio = airlock_cpio_new ();
  g_autoptr (GBytes) archive = NULL;
  g_autoptr (GPtrArray) entries = NULL;
  g_autoptr (GError) error = NULL;
  NewcEntry *e;

  write_file (dir, "prog", "hello, guest");
  /* The host file's mode and mtime must not leak into the archive. */
  g_chmod (src, 0600);
  g_assert_true (airlock_cpio_add_file (cpio, "init", 0755, src, &error));
  archive = cpio_to_bytes (cpio);
  entries = newc_parse (g_bytes_get_data (archive, NULL), g_bytes_get_size (archive));
  e = newc_find (entries, "init");
  g_assert_nonnull (e);
  g_assert_cmpuint (e->mode, ==, S_IFREG | 0755);
  g_assert_cmpuint (e->mtime, ==, 0);
  g_assert_cmpmem (g_bytes_get_data (e->data, NULL), g_bytes_get_size (e->data), "hello, guest", 12);

  /* A source that disappeared is an error naming the entry. */
  g_assert_true (airlock_cpio_add_file (cpio, "gone", 0644, "/nonexistent/airlock-test", &error));
  {
    g_autoptr (GOutputStream) out = g_memory_output_stream_new_resizable ();
    g_assert_false (airlock_cpio_write (cpio, out, NULL, NULL, &error));
    g_assert_nonnull (error);
    g_assert_nonnull (strstr (error->message, "'gone'"));
  }
  airlock_rm_rf (dir);
}

/* Symlinks and explicit directories (the testroot's links and its 1777
 * /tmp): listed once, with their own type and mode. */
static void
test_cpio_links_and_dirs (void)
{
  g_autoptr (AirlockCpio) cpio = airlock_cpio_new ();
  g_autoptr (GBytes) data = g_bytes_new_static ("x", 1);
  g_autoptr (GBytes) archive = NULL;
  g_autoptr (GPtrArray) entries = NULL;
  g_autoptr (GOutputStream) out = NULL;
  g_autoptr (GError) error = NULL;
  NewcEntry *e;

  g_assert_true (airlock_cpio_add_bytes (cpio, "root/bin/prog", 0755, data, &error));
  g_assert_true (airlock_cpio_add_symlink (cpio, "root/bin/link", "prog", &error));
  g_assert_true (airlock_cpio_add_directory (cpio, "root/tmp", 01777, &error));
  g_assert_true (airlock_cpio_add_directory (cpio, "root/bin", 0700, &error));
  g_assert_no_error (error);

  /* Nothing can live under a symlink or a file; a target is required. */
  g_assert_false (airlock_cpio_add_symlink (cpio, "root/empty", "", &error));
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED);
  g_clear_error (&error);
  g_assert_false (airlock_cpio_add_directory (cpio, "root/bin/link", 0755, &error));
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED);
  g_clear_error (&error);

  archive = cpio_to_bytes (cpio);
  entries = newc_parse (g_bytes_get_data (archive, NULL), g_bytes_get_size (archive));
  /* root (implied), root/bin (added, 0700), prog, link, tmp. */
  g_assert_cmpuint (entries->len, ==, 5);
  e = newc_find (entries, "root");
  g_assert_cmpuint (e->mode, ==, S_IFDIR | 0755);
  e = newc_find (entries, "root/bin");
  g_assert_cmpuint (e->mode, ==, S_IFDIR | 0700);
  g_assert_cmpuint (e->nlink, ==, 2);
  e = newc_find (entries, "root/bin/link");
  g_assert_cmpuint (e->mode, ==, S_IFLNK | 0777);
  g_assert_cmpmem (g_bytes_get_data (e->data, NULL), g_bytes_get_size (e->data), "prog", 4);
  e = newc_find (entries, "root/tmp");
  g_assert_cmpuint (e->mode, ==, S_IFDIR | 01777);
  g_assert_cmpuint (e->filesize, ==, 0);

  /* A file under a symlink is refused when the archive is laid out. */
  g_assert_true (airlock_cpio_add_bytes (cpio, "root/bin/link/x", 0644, data, &error));
  out = g_memory_output_stream_new_resizable ();
  g_assert_false (airlock_cpio_write (cpio, out, NULL, NULL, &error));
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED);
}

static void
test_cpio_rejects_bad_paths (void)
{
  static const char *const bad[] = { "", "/init", "a//b", "a/./b", "../x", "a/..", "a/", "." };
  g_autoptr (AirlockCpio) cpio = airlock_cpio_new ();
  g_autoptr (GBytes) data = g_bytes_new_static ("x", 1);
  g_autoptr (GError) error = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_assert_false (airlock_cpio_add_bytes (cpio, bad[i], 0644, data, &error));
      g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED);
      g_clear_error (&error);
    }

  g_assert_true (airlock_cpio_add_bytes (cpio, "lib", 0644, data, &error));
  g_assert_false (airlock_cpio_add_bytes (cpio, "lib", 0644, data, &error));
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED);
  g_clear_error (&error);

  /* "lib" is a file, so "lib/x" cannot be below it. */
  g_assert_true (airlock_cpio_add_bytes (cpio, "lib/x", 0644, data, &error));
  {
    g_autoptr (GOutputStream) out = g_memory_output_stream_new_resizable ();
    g_assert_false (airlock_cpio_write (cpio, out, NULL, NULL, &error));
    g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED);
  }
}

/* ---- synthetic kernels -------------------------------------------------- */

/* An ELF64 x86-64 executable with one PT_NOTE segment (a harmless Xen note,
 * then the PVH entry note if @pvh), a kernel banner, and filler so the
 * compressed payload has some size. */
static GBytes *
make_vmlinux (gboolean pvh)
{
  const char banner[] = "Linux version " TEST_RELEASE " (test@example) #1 SMP";
  gsize notes_off = 128, notes_len = pvh ? 20 + 20 : 20;
  gsize size = 8192;
  guint8 *elf = g_malloc0 (size);
  guint8 *n = elf + notes_off;

  memcpy (elf, "\x7f" "ELF", 4);
  elf[4] = 2;   /* ELFCLASS64 */
  elf[5] = 1;   /* little-endian */
  elf[6] = 1;
  put_le16 (elf + 16, 2);    /* ET_EXEC */
  put_le16 (elf + 18, 62);   /* EM_X86_64 */
  put_le32 (elf + 20, 1);
  put_le64 (elf + 24, 0x1000000);
  put_le64 (elf + 32, 64);   /* e_phoff */
  put_le16 (elf + 52, 64);
  put_le16 (elf + 54, 56);   /* e_phentsize */
  put_le16 (elf + 56, 1);    /* e_phnum */

  put_le32 (elf + 64, 4);    /* PT_NOTE */
  put_le64 (elf + 64 + 8, notes_off);
  put_le64 (elf + 64 + 32, notes_len);
  put_le64 (elf + 64 + 40, notes_len);

  /* XEN_ELFNOTE_GUEST_OS "linux" (type 6): must not be mistaken for PVH. */
  put_le32 (n, 4);
  put_le32 (n + 4, 4);
  put_le32 (n + 8, 6);
  memcpy (n + 12, "Xen", 4);
  memcpy (n + 16, "lnx", 4);
  if (pvh)
    {
      n += 20;
      put_le32 (n, 4);
      put_le32 (n + 4, 4);
      put_le32 (n + 8, 18);   /* XEN_ELFNOTE_PHYS32_ENTRY */
      memcpy (n + 12, "Xen", 4);
      put_le32 (n + 16, 0x1000000);
    }
  memcpy (elf + 1024, banner, sizeof banner);
  for (gsize i = 2048; i < size; i++)
    elf[i] = (guint8) (i * 7 + i / 13);
  return g_bytes_new_take (elf, size);
}

static GBytes *
compress_xz (GBytes *in)
{
  gsize len;
  const guint8 *data = g_bytes_get_data (in, &len);
  gsize out_size = len + 4096, out_pos = 0;
  guint8 *out = g_malloc (out_size);

  g_assert_cmpint (lzma_easy_buffer_encode (6, LZMA_CHECK_CRC32, NULL, data, len, out, &out_pos,
                                            out_size), ==, LZMA_OK);
  return g_bytes_new_take (out, out_pos);
}

static GBytes *
compress_gzip (GBytes *in)
{
  g_autoptr (GZlibCompressor) z = g_zlib_compressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP, 6);
  g_autoptr (GOutputStream) mem = g_memory_output_stream_new_resizable ();
  g_autoptr (GOutputStream) out = g_converter_output_stream_new (mem, G_CONVERTER (z));
  g_autoptr (GError) error = NULL;

  g_assert_true (g_output_stream_write_all (out, g_bytes_get_data (in, NULL), g_bytes_get_size (in),
                                            NULL, NULL, &error));
  g_assert_true (g_output_stream_close (out, NULL, &error));
  g_assert_no_error (error);
  return g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (mem));
}

#define BZ_SETUP_SECTS 3
#define BZ_PM_START ((BZ_SETUP_SECTS + 1) * 512)
#define BZ_PAYLOAD_OFFSET 0x200

/* A bzImage as the x86 build lays it out: boot sector and setup header,
 * protected-mode code, then @compressed followed by @declared_size. */
static GBytes *
make_bzimage (GBytes *compressed, guint32 declared_size, guint16 version)
{
  gsize clen = g_bytes_get_size (compressed);
  gsize payload_len = clen + 4;
  gsize size = BZ_PM_START + BZ_PAYLOAD_OFFSET + payload_len + 64;
  guint8 *bz = g_malloc0 (size);
  const char version_string[] = TEST_RELEASE " (test@example) #1 SMP";

  bz[0x1f1] = BZ_SETUP_SECTS;
  put_le16 (bz + 0x1fe, 0xaa55);
  memcpy (bz + 0x202, "HdrS", 4);
  put_le16 (bz + 0x206, version);
  put_le16 (bz + 0x20e, 0x300 - 0x200);
  memcpy (bz + 0x300, version_string, sizeof version_string);
  put_le32 (bz + 0x248, BZ_PAYLOAD_OFFSET);
  put_le32 (bz + 0x24c, payload_len);
  memcpy (bz + BZ_PM_START + BZ_PAYLOAD_OFFSET, g_bytes_get_data (compressed, NULL), clen);
  put_le32 (bz + BZ_PM_START + BZ_PAYLOAD_OFFSET + clen, declared_size);
  return g_bytes_new_take (bz, size);
}

static GBytes *
make_xz_bzimage (gboolean pvh, GBytes **ret_vmlinux)
{
  g_autoptr (GBytes) vmlinux = make_vmlinux (pvh);
  g_autoptr (GBytes) xz = compress_xz (vmlinux);
  GBytes *bz = make_bzimage (xz, g_bytes_get_size (vmlinux), 0x020f);

  if (ret_vmlinux)
    *ret_vmlinux = g_steal_pointer (&vmlinux);
  return bz;
}

static void
assert_extracts (GBytes *bz, GBytes *vmlinux)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) out = airlock_bzimage_extract_vmlinux (g_bytes_get_data (bz, NULL),
                                                            g_bytes_get_size (bz), "kernel 'test'",
                                                            &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (out, vmlinux));
}

static void
test_bzimage_extract_xz (void)
{
  g_autoptr (GBytes) vmlinux = NULL;
  g_autoptr (GBytes) bz = make_xz_bzimage (TRUE, &vmlinux);
  g_autoptr (AirlockBootKernel) kernel = NULL;
  g_autoptr (GError) error = NULL;
  AirlockArch arch;

  g_assert_cmpstr (airlock_bzimage_payload_compression (g_bytes_get_data (bz, NULL),
                                                        g_bytes_get_size (bz), "k", &error), ==, "xz");
  assert_extracts (bz, vmlinux);

  kernel = airlock_boot_kernel_prepare (AIRLOCK_ARCH_AMD64, bz, "kernel 'test'", &error);
  g_assert_no_error (error);
  g_assert_cmpint (kernel->format, ==, AIRLOCK_BOOT_KERNEL_VMLINUX_PVH);
  g_assert_cmpstr (kernel->file_name, ==, "vmlinux");
  g_assert_cmpstr (kernel->release, ==, TEST_RELEASE);
  g_assert_true (g_bytes_equal (kernel->image, vmlinux));

  g_assert_true (airlock_kernel_guess_arch (g_bytes_get_data (bz, NULL), g_bytes_get_size (bz), &arch));
  g_assert_cmpint (arch, ==, AIRLOCK_ARCH_AMD64);

  /* The same file is not an arm64 kernel. */
  g_clear_pointer (&kernel, airlock_boot_kernel_free);
  kernel = airlock_boot_kernel_prepare (AIRLOCK_ARCH_ARM64, bz, "kernel 'test'", &error);
  g_assert_null (kernel);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT);
  g_assert_nonnull (strstr (error->message, "amd64"));
}

static void
test_bzimage_extract_gzip (void)
{
  g_autoptr (GBytes) vmlinux = make_vmlinux (TRUE);
  g_autoptr (GBytes) gz = compress_gzip (vmlinux);
  g_autoptr (GBytes) bz = make_bzimage (gz, g_bytes_get_size (vmlinux), 0x020f);

  assert_extracts (bz, vmlinux);
}

static void
test_bzimage_no_pvh_boots_bzimage (void)
{
  g_autoptr (GBytes) bz = make_xz_bzimage (FALSE, NULL);
  g_autoptr (AirlockBootKernel) kernel = NULL;
  g_autoptr (GError) error = NULL;

  kernel = airlock_boot_kernel_prepare (AIRLOCK_ARCH_AMD64, bz, "kernel 'test'", &error);
  g_assert_no_error (error);
  g_assert_cmpint (kernel->format, ==, AIRLOCK_BOOT_KERNEL_BZIMAGE);
  g_assert_cmpstr (kernel->file_name, ==, "bzImage");
  g_assert_true (g_bytes_equal (kernel->image, bz));
  g_assert_nonnull (strstr (kernel->how, "PVH"));
  g_assert_cmpstr (kernel->release, ==, TEST_RELEASE);
}

static void
test_bzimage_other_compression (void)
{
  static const guint8 zstd_frame[] = { 0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0 };
  g_autoptr (GBytes) payload = g_bytes_new_static (zstd_frame, sizeof zstd_frame);
  g_autoptr (GBytes) bz = make_bzimage (payload, 4096, 0x020f);
  g_autoptr (GBytes) out = NULL;
  g_autoptr (AirlockBootKernel) kernel = NULL;
  g_autoptr (GError) error = NULL;

  out = airlock_bzimage_extract_vmlinux (g_bytes_get_data (bz, NULL), g_bytes_get_size (bz),
                                         "kernel 'test'", &error);
  g_assert_null (out);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT);
  g_assert_nonnull (strstr (error->message, "zstd"));
  g_assert_nonnull (strstr (error->message, "kernel 'test'"));
  g_clear_error (&error);

  /* Still bootable as a bzImage (the kernel decompresses itself): the
   * pipeline falls back rather than refusing Ubuntu's or Arch's kernels. */
  kernel = airlock_boot_kernel_prepare (AIRLOCK_ARCH_AMD64, bz, "kernel 'test'", &error);
  g_assert_no_error (error);
  g_assert_cmpint (kernel->format, ==, AIRLOCK_BOOT_KERNEL_BZIMAGE);
  g_assert_nonnull (strstr (kernel->how, "zstd"));
}

static void
assert_kernel_format_error (GBytes *bz)
{
  g_autoptr (GBytes) out = NULL;
  g_autoptr (AirlockBootKernel) kernel = NULL;
  g_autoptr (GError) error = NULL;

  out = airlock_bzimage_extract_vmlinux (g_bytes_get_data (bz, NULL), g_bytes_get_size (bz),
                                         "kernel 'test'", &error);
  g_assert_null (out);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT);
  g_assert_nonnull (strstr (error->message, "kernel 'test'"));
  g_clear_error (&error);
  kernel = airlock_boot_kernel_prepare (AIRLOCK_ARCH_AMD64, bz, "kernel 'test'", &error);
  g_assert_null (kernel);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT);
}

static void
test_bzimage_rejects_damaged (void)
{
  g_autoptr (GBytes) vmlinux = NULL;
  g_autoptr (GBytes) bz = make_xz_bzimage (TRUE, &vmlinux);
  gsize len;
  const guint8 *data = g_bytes_get_data (bz, &len);
  g_autoptr (GBytes) xz = compress_xz (vmlinux);

  /* Cut inside the payload: the header points past the end of the file. */
  {
    g_autoptr (GBytes) cut = g_bytes_new (data, BZ_PM_START + BZ_PAYLOAD_OFFSET + 100);
    assert_kernel_format_error (cut);
  }
  /* Cut inside the header. */
  {
    g_autoptr (GBytes) cut = g_bytes_new (data, 0x210);
    assert_kernel_format_error (cut);
  }
  /* Garbage. */
  {
    g_autofree guint8 *garbage = g_malloc (len);
    g_autoptr (GBytes) bytes = NULL;
    for (gsize i = 0; i < len; i++)
      garbage[i] = (guint8) (i * 31 + 7);
    bytes = g_bytes_new_take (g_steal_pointer (&garbage), len);
    assert_kernel_format_error (bytes);
  }
  /* A flipped byte inside the xz data. */
  {
    g_autofree guint8 *copy = g_memdup2 (data, len);
    g_autoptr (GBytes) bytes = NULL;
    copy[BZ_PM_START + BZ_PAYLOAD_OFFSET + g_bytes_get_size (xz) / 2] ^= 0x55;
    bytes = g_bytes_new_take (g_steal_pointer (&copy), len);
    assert_kernel_format_error (bytes);
  }
  /* xz stream truncated but framed consistently. */
  {
    g_autoptr (GBytes) short_xz = g_bytes_new (g_bytes_get_data (xz, NULL), g_bytes_get_size (xz) - 20);
    g_autoptr (GBytes) bytes = make_bzimage (short_xz, g_bytes_get_size (vmlinux), 0x020f);
    assert_kernel_format_error (bytes);
  }
  /* The appended size disagrees with the payload. */
  {
    g_autoptr (GBytes) bytes = make_bzimage (xz, g_bytes_get_size (vmlinux) + 1, 0x020f);
    assert_kernel_format_error (bytes);
  }
  /* Boot protocol 2.06: no payload fields yet. */
  {
    g_autoptr (GBytes) bytes = make_bzimage (xz, g_bytes_get_size (vmlinux), 0x0206);
    assert_kernel_format_error (bytes);
  }
}

static void
test_kernel_vmlinux_given (void)
{
  g_autoptr (GBytes) pvh = make_vmlinux (TRUE);
  g_autoptr (GBytes) plain = make_vmlinux (FALSE);
  g_autoptr (AirlockBootKernel) kernel = NULL;
  g_autoptr (GError) error = NULL;
  gsize len;
  const guint8 *data = g_bytes_get_data (pvh, &len);

  g_assert_true (airlock_elf_x86_64_has_pvh_note (data, len));
  g_assert_false (airlock_elf_x86_64_has_pvh_note (g_bytes_get_data (plain, NULL),
                                                   g_bytes_get_size (plain)));
  /* Truncations anywhere in the headers or notes are just "no note"; the
   * notes end at 128 + 2 * 20 bytes. */
  for (gsize cut = 0; cut < 168; cut++)
    g_assert_false (airlock_elf_x86_64_has_pvh_note (data, cut));
  g_assert_true (airlock_elf_x86_64_has_pvh_note (data, 168));

  kernel = airlock_boot_kernel_prepare (AIRLOCK_ARCH_AMD64, pvh, "kernel 'test'", &error);
  g_assert_no_error (error);
  g_assert_cmpint (kernel->format, ==, AIRLOCK_BOOT_KERNEL_VMLINUX_PVH);
  g_assert_true (g_bytes_equal (kernel->image, pvh));

  g_clear_pointer (&kernel, airlock_boot_kernel_free);
  kernel = airlock_boot_kernel_prepare (AIRLOCK_ARCH_AMD64, plain, "kernel 'test'", &error);
  g_assert_null (kernel);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT);
  g_assert_nonnull (strstr (error->message, "PVH"));
}

static GBytes *
make_arm64_image (void)
{
  gsize size = 16384;
  guint8 *img = g_malloc0 (size);
  const char banner[] = "Linux version " TEST_RELEASE " (test@example) #1 SMP";

  put_le64 (img + 8, 0x80000);   /* text_offset */
  put_le64 (img + 16, size);     /* image_size */
  memcpy (img + 0x38, "ARM\x64", 4);
  memcpy (img + 4096, banner, sizeof banner);
  return g_bytes_new_take (img, size);
}

static void
test_kernel_arm64 (void)
{
  g_autoptr (GBytes) image = make_arm64_image ();
  g_autoptr (GBytes) gz = compress_gzip (image);
  g_autoptr (AirlockBootKernel) kernel = NULL;
  g_autoptr (GError) error = NULL;
  AirlockArch arch;

  kernel = airlock_boot_kernel_prepare (AIRLOCK_ARCH_ARM64, image, "kernel 'test'", &error);
  g_assert_no_error (error);
  g_assert_cmpint (kernel->format, ==, AIRLOCK_BOOT_KERNEL_ARM64_IMAGE);
  g_assert_cmpstr (kernel->file_name, ==, "Image");
  g_assert_cmpstr (kernel->release, ==, TEST_RELEASE);
  g_assert_true (g_bytes_equal (kernel->image, image));
  g_assert_true (airlock_kernel_guess_arch (g_bytes_get_data (image, NULL), g_bytes_get_size (image), &arch));
  g_assert_cmpint (arch, ==, AIRLOCK_ARCH_ARM64);

  g_clear_pointer (&kernel, airlock_boot_kernel_free);
  kernel = airlock_boot_kernel_prepare (AIRLOCK_ARCH_ARM64, gz, "kernel 'test'", &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (kernel->image, image));

  /* An arm64 Image is not an amd64 kernel, and the message says so. */
  g_clear_pointer (&kernel, airlock_boot_kernel_free);
  kernel = airlock_boot_kernel_prepare (AIRLOCK_ARCH_AMD64, image, "kernel 'test'", &error);
  g_assert_null (kernel);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT);
  g_assert_nonnull (strstr (error->message, "arm64 Image"));
  g_clear_error (&error);

  /* A truncated gzip Image. */
  {
    g_autoptr (GBytes) cut = g_bytes_new (g_bytes_get_data (gz, NULL), g_bytes_get_size (gz) / 2);
    kernel = airlock_boot_kernel_prepare (AIRLOCK_ARCH_ARM64, cut, "kernel 'test'", &error);
    g_assert_null (kernel);
    g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT);
  }
}

/* ---- modules ------------------------------------------------------------ */

static const char fixture_modules_dep[] =
  "kernel/fs/ext4/ext4.ko: kernel/lib/crc16.ko kernel/fs/mbcache.ko kernel/fs/jbd2/jbd2.ko\n"
  "kernel/fs/jbd2/jbd2.ko:\n"
  "kernel/fs/mbcache.ko:\n"
  "kernel/lib/crc16.ko:\n"
  "kernel/drivers/virtio/virtio.ko:\n"
  "kernel/drivers/virtio/virtio_ring.ko: kernel/drivers/virtio/virtio.ko\n"
  "kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio_ring.ko kernel/drivers/virtio/virtio.ko\n"
  "kernel/drivers/char/hw_random/virtio-rng.ko: kernel/drivers/virtio/virtio_ring.ko  kernel/drivers/virtio/virtio.ko\n"
  "kernel/fs/overlayfs/overlay.ko.xz:\n"
  "kernel/sound/unrelated.ko: kernel/lib/crc16.ko\n"
  "\n"
  "# Aliases extracted from modules themselves.\n"
  "alias fs-ext4 ext4\n";

static const char fixture_modules_list[] =
  "# the guest's modules\n"
  "virtio_pci\n"
  "virtio-rng   # '-' and '_' are one character to modprobe\n"
  "ext4\n"
  "\n"
  "overlay\n"
  "virtio_console   # built in\n"
  "virtio_mem?\n";

static void
test_modules_closure_order (void)
{
  static const char *const expected[] = {
    "kernel/drivers/virtio/virtio.ko",
    "kernel/drivers/virtio/virtio_ring.ko",
    "kernel/drivers/virtio/virtio_pci.ko",
    "kernel/drivers/char/hw_random/virtio-rng.ko",
    "kernel/fs/jbd2/jbd2.ko",
    "kernel/fs/mbcache.ko",
    "kernel/lib/crc16.ko",
    "kernel/fs/ext4/ext4.ko",
    "kernel/fs/overlayfs/overlay.ko.xz",
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) requests = airlock_modules_list_parse (fixture_modules_list, "modules.list", &error);
  g_autoptr (AirlockModuleDep) dep = airlock_module_dep_parse (fixture_modules_dep, "fixture", &error);
  g_autoptr (GHashTable) builtin = airlock_modules_builtin_parse ("kernel/drivers/char/virtio_console.ko\n");
  g_autoptr (AirlockModuleClosure) closure = NULL;
  g_autofree char *dep_text = NULL;

  g_assert_no_error (error);
  g_assert_cmpuint (requests->len, ==, 6);
  g_assert_cmpstr (((AirlockModuleRequest *) requests->pdata[1])->name, ==, "virtio_rng");
  g_assert_true (((AirlockModuleRequest *) requests->pdata[5])->optional);

  closure = airlock_modules_closure (dep, builtin, requests, TEST_RELEASE, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (closure->load_order->len, ==, G_N_ELEMENTS (expected));
  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    g_assert_cmpstr (closure->load_order->pdata[i], ==, expected[i]);
  g_assert_cmpuint (closure->builtin->len, ==, 1);
  g_assert_cmpstr (closure->builtin->pdata[0], ==, "virtio_console");
  g_assert_cmpuint (closure->absent_optional->len, ==, 1);
  g_assert_cmpstr (closure->absent_optional->pdata[0], ==, "virtio_mem");

  /* modules.dep for the initramfs: only these modules, in load order. */
  dep_text = airlock_module_dep_format (dep, closure->load_order, NULL);
  g_assert_true (g_str_has_prefix (dep_text, "kernel/drivers/virtio/virtio.ko:\n"
                                             "kernel/drivers/virtio/virtio_ring.ko: kernel/drivers/virtio/virtio.ko\n"));
  g_assert_nonnull (strstr (dep_text, "\nkernel/fs/ext4/ext4.ko: kernel/lib/crc16.ko kernel/fs/mbcache.ko kernel/fs/jbd2/jbd2.ko\n"));
  g_assert_null (strstr (dep_text, "unrelated"));
}

/* A module as scripts/sign-file leaves it: the code, the PKCS#7 signature,
 * struct module_signature (sig_len big-endian last), the marker. */
static GBytes *
signed_module (const char *code, const char *signature, guint32 claimed_len)
{
  GByteArray *b = g_byte_array_new ();
  guint8 info[12] = { 0, 0, 2 /* PKEY_ID_PKCS7 */, 0, 0, 0, 0, 0,
                      claimed_len >> 24, claimed_len >> 16, claimed_len >> 8, claimed_len };

  g_byte_array_append (b, (const guint8 *) code, strlen (code));
  g_byte_array_append (b, (const guint8 *) signature, strlen (signature));
  g_byte_array_append (b, info, sizeof info);
  g_byte_array_append (b, (const guint8 *) "~Module signature appended~\n", 28);
  return g_byte_array_free_to_bytes (b);
}

/* Pinned kernels' modules lose their signature (the guest would verify it
 * at every load), byte-exactly; an unsigned module is left as it is; a
 * trailer that claims more than the file holds is an error naming it. */
static void
test_modules_strip_signature (void)
{
  g_autoptr (GBytes) ko = signed_module ("\177ELF module code", "PKCS7-SIGNATURE", 15);
  g_autoptr (GBytes) plain = g_bytes_new_static ("\177ELF module code", strlen ("\177ELF module code"));
  g_autoptr (GBytes) lying = signed_module ("\177ELF", "SIG", 4000);
  g_autoptr (GBytes) stripped = NULL;
  g_autoptr (GBytes) same = NULL;
  g_autoptr (GBytes) none = NULL;
  g_autoptr (GError) error = NULL;

  stripped = airlock_module_strip_signature (ko, "module 'a.ko'", &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (stripped, plain));
  same = airlock_module_strip_signature (plain, "module 'b.ko'", &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (same, plain));
  none = airlock_module_strip_signature (lying, "module 'c.ko'", &error);
  g_assert_null (none);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_MODULES);
  g_assert_nonnull (strstr (error->message, "module 'c.ko'"));
  g_assert_nonnull (strstr (error->message, "4000"));
}

static void
test_modules_closure_cycle (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) requests = airlock_modules_list_parse ("a\n", "modules.list", &error);
  g_autoptr (AirlockModuleDep) dep = airlock_module_dep_parse ("a.ko: b.ko\nb.ko: c.ko\nc.ko: a.ko\n",
                                                               "fixture", &error);
  g_autoptr (AirlockModuleClosure) closure = NULL;

  g_assert_no_error (error);
  closure = airlock_modules_closure (dep, NULL, requests, TEST_RELEASE, &error);
  g_assert_null (closure);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_MODULES);
  g_assert_nonnull (strstr (error->message, "cycle"));
  g_assert_nonnull (strstr (error->message, "a.ko → b.ko → c.ko → a.ko"));
}

static void
test_modules_closure_missing (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) requests = airlock_modules_list_parse ("a\n", "modules.list", &error);
  g_autoptr (GPtrArray) required = airlock_modules_list_parse ("nope\n", "modules.list", &error);
  g_autoptr (AirlockModuleDep) dep = airlock_module_dep_parse ("kernel/a.ko: kernel/gone.ko\n",
                                                               "fixture", &error);
  g_autoptr (AirlockModuleClosure) closure = NULL;

  g_assert_no_error (error);
  /* A dependency with no entry of its own. */
  closure = airlock_modules_closure (dep, NULL, requests, TEST_RELEASE, &error);
  g_assert_null (closure);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_MODULES);
  g_assert_nonnull (strstr (error->message, "'kernel/a.ko'"));
  g_assert_nonnull (strstr (error->message, "'kernel/gone.ko'"));
  g_clear_error (&error);

  /* A required module the kernel does not have. */
  closure = airlock_modules_closure (dep, NULL, required, TEST_RELEASE, &error);
  g_assert_null (closure);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_MODULES);
  g_assert_nonnull (strstr (error->message, "'nope'"));
  g_assert_nonnull (strstr (error->message, TEST_RELEASE));
}

static void
test_modules_parse_errors (void)
{
  static const struct {
    const char *text;
    const char *needle;
  } bad_lists[] = {
    { "ext4\nvirtio pci\n", "line 2" },
    { "ext4\n../x\n", "line 2" },
    { "ext4\n# c\next4?\n", "listed twice" },
    { "virtio-rng\nvirtio_rng\n", "listed twice" },
    { "?\n", "line 1" },
  };
  static const char *const bad_deps[] = {
    "../evil.ko:\n",
    "/lib/modules/x/kernel/a.ko:\n",
    "kernel/a.ko: kernel/../../b.ko\n",
    "kernel/a.ko kernel/b.ko\n",
    "kernel/readme.txt:\n",
    "kernel/a.ko:\nkernel/a.ko:\n",
  };

  for (guint i = 0; i < G_N_ELEMENTS (bad_lists); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GPtrArray) requests = airlock_modules_list_parse (bad_lists[i].text, "/x/modules.list", &error);

      g_assert_null (requests);
      g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE);
      g_assert_nonnull (strstr (error->message, "'/x/modules.list'"));
      g_assert_nonnull (strstr (error->message, bad_lists[i].needle));
    }
  for (guint i = 0; i < G_N_ELEMENTS (bad_deps); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (AirlockModuleDep) dep = airlock_module_dep_parse (bad_deps[i], "fixture", &error);

      g_assert_null (dep);
      g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_MODULES);
      g_assert_nonnull (strstr (error->message, "line"));
    }
  {
    g_autofree char *name = airlock_module_name_from_path ("kernel/drivers/char/hw_random/virtio-rng.ko.xz");
    g_assert_cmpstr (name, ==, "virtio_rng");
  }
}

/* ---- recipe ------------------------------------------------------------- */

static const char valid_kernels_ini[] =
  "# pins\n"
  "[amd64]\n"
  "package=linux-image-6.1.0-50-amd64\n"
  "version=6.1.176-1\n"
  "sha256=7b5597492a0a65aee61985a492e6bcc3f2cde830072a0e3b3d8c7e1b90279bd3\n"
  "size=70305560\n";

static void
assert_recipe_error (const char *dir, const char *text, const char *needle)
{
  g_autofree char *path = g_build_filename (dir, "kernels.ini", NULL);
  g_autoptr (AirlockKernelPin) pin = NULL;
  g_autoptr (GError) error = NULL;

  if (text)
    write_file (dir, "kernels.ini", text);
  pin = airlock_kernel_pin_load (path, AIRLOCK_ARCH_AMD64, &error);
  g_assert_null (pin);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE);
  g_assert_nonnull (strstr (error->message, path));
  if (needle)
    g_assert_nonnull (strstr (error->message, needle));
}

static char *
replace_line (const char *text, const char *key, const char *line)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_autofree char *prefix = g_strconcat (key, "=", NULL);

  for (guint i = 0; lines[i]; i++)
    if (g_str_has_prefix (lines[i], prefix))
      {
        g_free (lines[i]);
        lines[i] = g_strdup (line);
      }
  return g_strjoinv ("\n", lines);
}

static void
test_recipe_kernels_ini (void)
{
  g_autofree char *dir = g_dir_make_tmp ("airlock-test-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "kernels.ini", NULL);
  g_autoptr (AirlockKernelPin) pin = NULL;
  g_autoptr (GError) error = NULL;
  static const struct {
    const char *key;
    const char *line;
  } bad_values[] = {
    { "sha256", "sha256=7B5597492A0A65AEE61985A492E6BCC3F2CDE830072A0E3B3D8C7E1B90279BD3" },
    { "sha256", "sha256=7b5597" },
    { "package", "package=-o APT::x" },
    { "version", "version=latest" },
    { "size", "size=0" },
    { "size", "size=12kB" },
  };

  write_file (dir, "kernels.ini", valid_kernels_ini);
  pin = airlock_kernel_pin_load (path, AIRLOCK_ARCH_AMD64, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (pin->package, ==, "linux-image-6.1.0-50-amd64");
  g_assert_cmpstr (pin->version, ==, "6.1.176-1");
  g_assert_cmpuint (pin->size, ==, 70305560);

  /* No [arm64] group. */
  g_clear_pointer (&pin, airlock_kernel_pin_free);
  pin = airlock_kernel_pin_load (path, AIRLOCK_ARCH_ARM64, &error);
  g_assert_null (pin);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE);
  g_assert_nonnull (strstr (error->message, path));
  g_assert_nonnull (strstr (error->message, "[arm64]"));
  g_clear_error (&error);

  for (guint i = 0; i < G_N_ELEMENTS (bad_values); i++)
    {
      g_autofree char *text = replace_line (valid_kernels_ini, bad_values[i].key, bad_values[i].line);
      g_autofree char *needle = g_strdup_printf ("key '%s'", bad_values[i].key);
      assert_recipe_error (dir, text, needle);
    }
  {
    g_autofree char *text = replace_line (valid_kernels_ini, "sha256", "# no sha256");
    assert_recipe_error (dir, text, "'sha256'");
  }
  assert_recipe_error (dir, "[amd64\npackage=x\n", NULL);
  g_unlink (path);
  assert_recipe_error (dir, NULL, NULL);
  airlock_rm_rf (dir);
}

/* ---- the pipeline, with a custom kernel --------------------------------- */

typedef struct {
  char *root;
  char *data_dir;
  char *guest_dir;
  char *modules_dir;
  char *kernel;
  GBytes *vmlinux;
} Pipeline;

static void
pipeline_setup (Pipeline *p, gconstpointer user_data)
{
  g_autoptr (GBytes) bz = NULL;
  g_autoptr (GError) error = NULL;

  p->root = g_dir_make_tmp ("airlock-test-XXXXXX", NULL);
  p->data_dir = g_strdup (g_getenv ("AIRLOCK_DATA_DIR"));
  p->guest_dir = g_strdup (g_getenv ("AIRLOCK_GUEST_DIR"));
  p->modules_dir = g_build_filename (p->root, "lib", "modules", TEST_RELEASE, NULL);
  p->kernel = g_build_filename (p->root, "bzImage", NULL);
  g_mkdir_with_parents (p->data_dir, 0755);
  g_mkdir_with_parents (p->guest_dir, 0755);
  g_mkdir_with_parents (p->modules_dir, 0755);

  /* A kernel with everything built in: the module tree has no .ko files,
   * so depmod has nothing to read and the test needs no real kernel. */
  write_file (p->data_dir, "modules.list", "virtio_pci\nvirtio_rng?\n");
  /* No Debian package in the testroot unless a test pins one. */
  write_file (p->data_dir, "testroot.ini", "# no packages\n");
  write_file (p->modules_dir, "modules.builtin", "kernel/drivers/virtio/virtio_pci.ko\n");
  write_file (p->modules_dir, "modules.order", "");
  write_file (p->guest_dir, "init-amd64", "#!/not/really/a/static/init\n");
  write_file (p->guest_dir, "probe-amd64", "#!/not/really/a/static/probe\n");
  bz = make_xz_bzimage (TRUE, &p->vmlinux);
  g_file_set_contents (p->kernel, g_bytes_get_data (bz, NULL), g_bytes_get_size (bz), &error);
  g_assert_no_error (error);
}

static void
pipeline_teardown (Pipeline *p, gconstpointer user_data)
{
  airlock_rm_rf (p->root);
  airlock_rm_rf (p->data_dir);
  airlock_rm_rf (p->guest_dir);
  g_free (p->root);
  g_free (p->data_dir);
  g_free (p->guest_dir);
  g_free (p->modules_dir);
  g_free (p->kernel);
  g_bytes_unref (p->vmlinux);
}

static gboolean
have_depmod (void)
{
  g_autofree char *depmod = g_find_program_in_path ("depmod");

  if (depmod || g_file_test ("/usr/sbin/depmod", G_FILE_TEST_IS_EXECUTABLE)
      || g_file_test ("/sbin/depmod", G_FILE_TEST_IS_EXECUTABLE))
    return TRUE;
  g_test_skip ("depmod (kmod) is not installed");
  return FALSE;
}

static AirlockGuestImage *
ensure (Pipeline *p, const char *cache, gboolean offline, gboolean force, GError **error)
{
  AirlockGuestImageOptions opts = {
    .cache_dir = cache,
    .kernel_path = p->kernel,
    .modules_dir = p->modules_dir,
    .offline = offline,
    .force = force,
  };

  return airlock_guest_image_ensure (AIRLOCK_ARCH_AMD64, &opts, error);
}

static GBytes *
read_bytes (const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GMappedFile) mapped = g_mapped_file_new (path, FALSE, &error);

  g_assert_no_error (error);
  return g_mapped_file_get_bytes (mapped);
}

static void
test_pipeline_build_and_cache (Pipeline *p, gconstpointer user_data)
{
  g_autofree char *cache = g_build_filename (p->root, "cache", NULL);
  g_autofree char *cache2 = g_build_filename (p->root, "cache2", NULL);
  g_autoptr (AirlockGuestImage) image = NULL;
  g_autoptr (AirlockGuestImage) again = NULL;
  g_autoptr (AirlockGuestImage) other = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) initramfs = NULL;
  g_autoptr (GPtrArray) entries = NULL;
  g_autofree char *sha = NULL;
  GStatBuf before, after;
  NewcEntry *e;

  if (!have_depmod ())
    return;

  /* Offline, nothing cached: NOT_BUILT, and the message says how to build. */
  image = ensure (p, cache, TRUE, FALSE, &error);
  g_assert_null (image);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_NOT_BUILT);
  g_assert_nonnull (strstr (error->message, "airlock images build"));
  g_clear_error (&error);

  image = ensure (p, cache, FALSE, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (image->kernel_release, ==, TEST_RELEASE);
  g_assert_true (g_str_has_suffix (image->kernel_path, "/vmlinux"));
  g_assert_true (g_str_has_prefix (image->dir, cache));
  g_assert_true (g_str_has_prefix (image->kernel_source, "custom "));
  {
    g_autoptr (GBytes) kernel = read_bytes (image->kernel_path);
    g_assert_true (g_bytes_equal (kernel, p->vmlinux));
  }
  sha = airlock_sha256_file (image->initramfs_path, &error);
  g_assert_cmpstr (sha, ==, image->initramfs_sha256);
  /* The test's kernel has no BTF: the recorder could not load in it. */
  {
    AirlockKernelBpf bpf = AIRLOCK_KERNEL_BPF_LSM;

    g_assert_true (airlock_guest_image_read_kernel_bpf (image, &bpf, &error));
    g_assert_no_error (error);
    g_assert_cmpint (bpf, ==, AIRLOCK_KERNEL_BPF_NO_BTF);
  }
  /* A custom kernel may enforce module signatures: its modules are kept
   * as given, and the manifest says so. */
  {
    g_autofree char *manifest_path = g_build_filename (image->dir, "manifest.json", NULL);
    g_autofree char *manifest = NULL;

    g_assert_true (g_file_get_contents (manifest_path, &manifest, NULL, NULL));
    g_assert_nonnull (strstr (manifest, "\"module_signatures\" : \"kept\""));
  }

  initramfs = read_bytes (image->initramfs_path);
  entries = newc_parse (g_bytes_get_data (initramfs, NULL), g_bytes_get_size (initramfs));
  e = newc_find (entries, "init");
  g_assert_nonnull (e);
  g_assert_cmpuint (e->mode, ==, S_IFREG | 0755);
  /* The negative controls the supervisor runs before the image. */
  e = newc_find (entries, "airlock/controls/bin/probe");
  g_assert_nonnull (e);
  g_assert_cmpuint (e->mode, ==, S_IFREG | 0755);
  e = newc_find (entries, "lib/modules/load.list");
  g_assert_nonnull (e);
  g_assert_cmpuint (e->filesize, ==, 0);   /* all built in */
  g_assert_nonnull (newc_find (entries, "lib/modules/" TEST_RELEASE "/modules.dep"));

  /* Cached: same directory, nothing rewritten. */
  g_assert_cmpint (g_stat (image->manifest_path, &before), ==, 0);
  again = ensure (p, cache, TRUE, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (again->dir, ==, image->dir);
  g_assert_cmpint (g_stat (image->manifest_path, &after), ==, 0);
  g_assert_cmpint (before.st_ino, ==, after.st_ino);
  g_assert_cmpint (before.st_mtime, ==, after.st_mtime);

  /* Reproducible: another cache, the same bytes. */
  other = ensure (p, cache2, FALSE, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (other->initramfs_sha256, ==, image->initramfs_sha256);
  g_assert_cmpstr (other->kernel_sha256, ==, image->kernel_sha256);
  {
    g_autoptr (GBytes) m1 = read_bytes (image->manifest_path);
    g_autoptr (GBytes) m2 = read_bytes (other->manifest_path);
    g_assert_true (g_bytes_equal (m1, m2));
  }

  /* --force rebuilds in place, to the same bytes. */
  g_clear_pointer (&again, airlock_guest_image_free);
  again = ensure (p, cache, FALSE, TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (again->dir, ==, image->dir);
  g_assert_cmpstr (again->initramfs_sha256, ==, image->initramfs_sha256);
}

static void
test_pipeline_damage_is_rebuilt (Pipeline *p, gconstpointer user_data)
{
  g_autofree char *cache = g_build_filename (p->root, "cache", NULL);
  g_autoptr (AirlockGuestImage) image = NULL;
  g_autoptr (AirlockGuestImage) again = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *sha = NULL;
  FILE *f;

  if (!have_depmod ())
    return;
  image = ensure (p, cache, FALSE, FALSE, &error);
  g_assert_no_error (error);

  /* A byte appended: the size no longer matches the manifest. */
  f = fopen (image->initramfs_path, "a");
  g_assert_nonnull (f);
  fputc ('x', f);
  fclose (f);
  again = ensure (p, cache, TRUE, FALSE, &error);
  g_assert_null (again);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_NOT_BUILT);
  g_assert_nonnull (strstr (error->message, "initramfs.cpio"));
  g_clear_error (&error);

  /* Built again on the next non-offline call, to the original bytes. */
  again = ensure (p, cache, FALSE, FALSE, &error);
  g_assert_no_error (error);
  sha = airlock_sha256_file (again->initramfs_path, &error);
  g_assert_cmpstr (sha, ==, image->initramfs_sha256);

  /* Same size, rewritten later: the mtime gives it away. */
  {
    g_autoptr (GBytes) kernel = read_bytes (again->kernel_path);
    g_autofree guint8 *copy = g_memdup2 (g_bytes_get_data (kernel, NULL), g_bytes_get_size (kernel));
    struct timespec ts = { 0, 50 * 1000 * 1000 };

    nanosleep (&ts, NULL);
    copy[100] ^= 1;
    g_assert_true (g_file_set_contents (again->kernel_path, (char *) copy, g_bytes_get_size (kernel), NULL));
  }
  g_clear_pointer (&again, airlock_guest_image_free);
  again = ensure (p, cache, TRUE, FALSE, &error);
  g_assert_null (again);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_NOT_BUILT);
  g_assert_nonnull (strstr (error->message, "modified"));
}

static void
test_pipeline_input_errors (Pipeline *p, gconstpointer user_data)
{
  g_autofree char *cache = g_build_filename (p->root, "cache", NULL);
  g_autofree char *wrong = g_build_filename (p->root, "lib", "modules", "1.2.3-other", NULL);
  g_autofree char *init = g_build_filename (p->guest_dir, "init-amd64", NULL);
  g_autoptr (AirlockGuestImage) image = NULL;
  g_autoptr (GError) error = NULL;
  char *saved;

  if (!have_depmod ())
    return;

  /* Modules of another release than the kernel's banner. */
  g_mkdir_with_parents (wrong, 0755);
  saved = p->modules_dir;
  p->modules_dir = wrong;
  image = ensure (p, cache, FALSE, FALSE, &error);
  p->modules_dir = saved;
  g_assert_null (image);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_MODULES);
  g_assert_nonnull (strstr (error->message, TEST_RELEASE));
  g_assert_nonnull (strstr (error->message, "1.2.3-other"));
  g_clear_error (&error);

  /* A required module neither present nor built in. */
  write_file (p->data_dir, "modules.list", "virtio_pci\next4\n");
  image = ensure (p, cache, FALSE, FALSE, &error);
  g_assert_null (image);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_MODULES);
  g_assert_nonnull (strstr (error->message, "'ext4'"));
  g_clear_error (&error);

  /* No init program for this arch. */
  g_unlink (init);
  image = ensure (p, cache, TRUE, FALSE, &error);
  g_assert_null (image);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_GUEST_PROGRAM);
  g_assert_nonnull (strstr (error->message, "init-amd64"));
  g_clear_error (&error);

  /* Nothing half-built was left behind by the failures. */
  {
    g_autofree char *arch_dir = g_build_filename (cache, "guest", "amd64", NULL);
    g_autoptr (GDir) dir = g_dir_open (arch_dir, 0, NULL);
    const char *name;
    while (dir && (name = g_dir_read_name (dir)))
      g_assert_cmpstr (name, ==, ".lock");
  }
}

static void
test_pipeline_program_change (Pipeline *p, gconstpointer user_data)
{
  g_autofree char *cache = g_build_filename (p->root, "cache", NULL);
  g_autoptr (AirlockGuestImage) first = NULL;
  g_autoptr (AirlockGuestImage) second = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) stages = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *arch_dir = g_build_filename (cache, "guest", "amd64", NULL);
  g_autofree char *stage_json = NULL;
  g_autoptr (GDir) dir = NULL;
  const char *name;
  GStatBuf before, after;

  if (!have_depmod ())
    return;
  first = ensure (p, cache, FALSE, FALSE, &error);
  g_assert_no_error (error);
  dir = g_dir_open (arch_dir, 0, NULL);
  while (dir && (name = g_dir_read_name (dir)))
    if (g_str_has_prefix (name, "kernel-"))
      g_ptr_array_add (stages, g_strdup (name));
  g_assert_cmpuint (stages->len, ==, 1);
  stage_json = g_build_filename (arch_dir, stages->pdata[0], "kernel.json", NULL);
  g_assert_cmpint (g_stat (stage_json, &before), ==, 0);

  /* A new init: a new image, from the same kernel stage (not extracted
   * again), with the same kernel and a different initramfs. */
  write_file (p->guest_dir, "init-amd64", "#!/a/newer/init\n");
  second = ensure (p, cache, FALSE, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (second->dir, !=, first->dir);
  g_assert_cmpstr (second->kernel_sha256, ==, first->kernel_sha256);
  g_assert_cmpstr (second->initramfs_sha256, !=, first->initramfs_sha256);
  g_assert_cmpint (g_stat (stage_json, &after), ==, 0);
  g_assert_cmpint (before.st_ino, ==, after.st_ino);
  g_assert_cmpint (before.st_mtime, ==, after.st_mtime);
}

/* The testroot variant: the base initramfs byte for byte, then a second
 * archive with the test programs, a /bin link per behaviour of the arch and
 * the empty directories; cached in a file of its own, rebuilt when a test
 * program changes, refused offline until built. */
static void
test_pipeline_testroot (Pipeline *p, gconstpointer user_data)
{
  g_autofree char *cache = g_build_filename (p->root, "cache", NULL);
  g_autoptr (AirlockGuestImage) base = NULL;
  g_autoptr (AirlockGuestImage) image = NULL;
  g_autoptr (AirlockGuestImage) again = NULL;
  g_autoptr (AirlockGuestImage) changed = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) base_bytes = NULL;
  g_autoptr (GBytes) bytes = NULL;
  g_autoptr (GPtrArray) entries = NULL;
  g_autofree char *sha = NULL;
  g_autofree char *exec_path = NULL;
  AirlockGuestImageOptions opts = {
    .cache_dir = cache,
    .kernel_path = p->kernel,
    .modules_dir = p->modules_dir,
    .with_testroot = TRUE,
  };
  const guint8 *data;
  gsize base_len, len;
  GStatBuf before, after;
  NewcEntry *e;

  if (!have_depmod ())
    return;
  write_file (p->guest_dir, "testprog-amd64", "testprog for amd64");
  write_file (p->guest_dir, "testprog-exec-amd64", "testprog-exec for amd64");

  base = ensure (p, cache, FALSE, FALSE, &error);
  g_assert_no_error (error);
  /* Offline: the base is cached, the testroot is not. */
  opts.offline = TRUE;
  image = airlock_guest_image_ensure (AIRLOCK_ARCH_AMD64, &opts, &error);
  g_assert_null (image);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_NOT_BUILT);
  g_clear_error (&error);
  opts.offline = FALSE;

  image = airlock_guest_image_ensure (AIRLOCK_ARCH_AMD64, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (image->kernel_path, ==, base->kernel_path);
  g_assert_cmpstr (image->initramfs_path, !=, base->initramfs_path);
  g_assert_true (g_str_has_prefix (image->initramfs_path, cache));
  sha = airlock_sha256_file (image->initramfs_path, &error);
  g_assert_cmpstr (sha, ==, image->initramfs_sha256);

  base_bytes = read_bytes (base->initramfs_path);
  bytes = read_bytes (image->initramfs_path);
  base_len = g_bytes_get_size (base_bytes);
  data = g_bytes_get_data (bytes, &len);
  g_assert_cmpuint (len, >, base_len);
  g_assert_cmpmem (data, base_len, g_bytes_get_data (base_bytes, NULL), base_len);
  entries = newc_parse (data + base_len, len - base_len);

  e = newc_find (entries, "airlock/testroot/bin/testprog");
  g_assert_nonnull (e);
  g_assert_cmpuint (e->mode, ==, S_IFREG | 0755);
  g_assert_cmpmem (g_bytes_get_data (e->data, NULL), g_bytes_get_size (e->data),
                   "testprog for amd64", strlen ("testprog for amd64"));
  g_assert_nonnull (newc_find (entries, "airlock/testroot/bin/testprog-exec"));
  /* No AArch32 program on amd64, and no arm64-only behaviour. */
  g_assert_null (newc_find (entries, "airlock/testroot/bin/testprog-arm32"));
  g_assert_null (newc_find (entries, "airlock/testroot/bin/aarch32"));
  for (guint i = 0; i < 4; i++)
    {
      /* One of each list of behaviours.h, and an amd64-only one. */
      static const char *const links[] = { "connect-tcp4", "tree", "i386-int80", "net-http" };
      g_autofree char *path = g_strdup_printf ("airlock/testroot/bin/%s", links[i]);

      e = newc_find (entries, path);
      g_assert_nonnull (e);
      g_assert_cmpuint (e->mode, ==, S_IFLNK | 0777);
      g_assert_cmpmem (g_bytes_get_data (e->data, NULL), g_bytes_get_size (e->data), "testprog", 8);
    }
  e = newc_find (entries, "airlock/testroot/tmp");
  g_assert_nonnull (e);
  g_assert_cmpuint (e->mode, ==, S_IFDIR | 01777);
  for (guint i = 0; i < 5; i++)
    {
      static const char *const dirs[] = { "proc", "dev", "sys", "etc", "root" };
      g_autofree char *path = g_strdup_printf ("airlock/testroot/%s", dirs[i]);

      e = newc_find (entries, path);
      g_assert_nonnull (e);
      g_assert_true (S_ISDIR (e->mode));
    }

  /* Cached: found offline, nothing rewritten. */
  g_assert_cmpint (g_stat (image->initramfs_path, &before), ==, 0);
  opts.offline = TRUE;
  again = airlock_guest_image_ensure (AIRLOCK_ARCH_AMD64, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (again->initramfs_path, ==, image->initramfs_path);
  g_assert_cmpstr (again->initramfs_sha256, ==, image->initramfs_sha256);
  g_assert_cmpint (g_stat (image->initramfs_path, &after), ==, 0);
  g_assert_cmpint (before.st_ino, ==, after.st_ino);
  opts.offline = FALSE;

  /* A changed test program: another testroot, the same base. */
  write_file (p->guest_dir, "testprog-amd64", "testprog for amd64, rebuilt");
  changed = airlock_guest_image_ensure (AIRLOCK_ARCH_AMD64, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (changed->dir, ==, image->dir);
  g_assert_cmpstr (changed->initramfs_path, !=, image->initramfs_path);
  g_assert_cmpstr (changed->initramfs_sha256, !=, image->initramfs_sha256);

  /* A missing test program is named. */
  exec_path = g_build_filename (p->guest_dir, "testprog-exec-amd64", NULL);
  g_assert_cmpint (g_unlink (exec_path), ==, 0);
  g_clear_pointer (&again, airlock_guest_image_free);
  again = airlock_guest_image_ensure (AIRLOCK_ARCH_AMD64, &opts, &error);
  g_assert_null (again);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_GUEST_PROGRAM);
  g_assert_nonnull (strstr (error->message, "testprog-exec-amd64"));
}

/* Builds "fake-tool_1.0-1_amd64.deb" in @dir with usr/bin/fake-tool, a
 * library and a symlink to it, and returns its path (NULL: no dpkg-deb). */
static char *
make_fake_deb (const char *dir)
{
  g_autofree char *tree = g_build_filename (dir, "fake-tool-tree", NULL);
  g_autofree char *debian = g_build_filename (tree, "DEBIAN", NULL);
  g_autofree char *bin = g_build_filename (tree, "usr", "bin", NULL);
  g_autofree char *lib = g_build_filename (tree, "lib", "x86_64-linux-gnu", NULL);
  g_autofree char *tool = g_build_filename (bin, "fake-tool", NULL);
  g_autofree char *link = g_build_filename (lib, "libfake.so.1", NULL);
  g_autofree char *deb = g_build_filename (dir, "fake-tool_1.0-1_amd64.deb", NULL);
  g_autofree char *dpkg_deb = g_find_program_in_path ("dpkg-deb");
  const char *argv[] = { NULL, "--root-owner-group", "-Zgzip", "--build", tree, deb, NULL };
  int wait_status = -1;

  if (!dpkg_deb)
    return NULL;
  argv[0] = dpkg_deb;
  g_mkdir_with_parents (debian, 0755);
  g_mkdir_with_parents (bin, 0755);
  g_mkdir_with_parents (lib, 0755);
  write_file (debian, "control", "Package: fake-tool\nVersion: 1.0-1\nArchitecture: amd64\n"
              "Maintainer: airlock tests <tests@invalid>\nDescription: a test package\n");
  write_file (bin, "fake-tool", "#!/fake/tool\n");
  g_assert_cmpint (g_chmod (tool, 0755), ==, 0);
  write_file (lib, "libfake.so.1.2", "a fake library");
  write_file (lib, "unwanted", "not named in the recipe");
  g_assert_cmpint (symlink ("libfake.so.1.2", link), ==, 0);
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                               NULL, NULL, &wait_status, NULL));
  g_assert_true (g_spawn_check_wait_status (wait_status, NULL));
  return g_steal_pointer (&deb);
}

/* testroot.ini's packages: the pinned .deb (here put in the downloads
 * directory by hand, as the recipe's comments suggest; apt is never asked)
 * gives exactly the files the recipe names, at their package paths, with
 * their modes and symlinks; the pin is part of the key; a file the package
 * lacks is named; a bad pin is refused before anything is fetched. */
static void
test_pipeline_testroot_packages (Pipeline *p, gconstpointer user_data)
{
  g_autofree char *cache = g_build_filename (p->root, "cache", NULL);
  g_autofree char *downloads = g_build_filename (cache, "downloads", NULL);
  g_autofree char *deb = NULL;
  g_autofree char *sha256 = NULL;
  g_autofree char *ini = NULL;
  g_autoptr (AirlockGuestImage) image = NULL;
  g_autoptr (AirlockGuestImage) other = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) base_bytes = NULL;
  g_autoptr (GBytes) bytes = NULL;
  g_autoptr (GPtrArray) entries = NULL;
  AirlockGuestImageOptions opts = {
    .cache_dir = cache,
    .kernel_path = p->kernel,
    .modules_dir = p->modules_dir,
    .with_testroot = TRUE,
  };
  const guint8 *data;
  gsize len;
  GStatBuf st;
  NewcEntry *e;

  if (!have_depmod ())
    return;
  g_mkdir_with_parents (downloads, 0755);
  deb = make_fake_deb (downloads);
  if (!deb)
    {
      g_test_skip ("dpkg-deb is not installed");
      return;
    }
  sha256 = airlock_sha256_file (deb, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_stat (deb, &st), ==, 0);
  write_file (p->guest_dir, "testprog-amd64", "testprog for amd64");
  write_file (p->guest_dir, "testprog-exec-amd64", "testprog-exec for amd64");
  ini = g_strdup_printf ("[arm64 other]\nversion=1\nsha256=%s\nsize=1\nfiles=x\n\n"
                         "[amd64 fake-tool]\nversion=1.0-1\nsha256=%s\nsize=%" G_GUINT64_FORMAT "\n"
                         "files=usr/bin/fake-tool;lib/x86_64-linux-gnu/libfake.so.1;"
                         "lib/x86_64-linux-gnu/libfake.so.1.2\n",
                         sha256, sha256, (guint64) st.st_size);
  write_file (p->data_dir, "testroot.ini", ini);

  image = airlock_guest_image_ensure (AIRLOCK_ARCH_AMD64, &opts, &error);
  g_assert_no_error (error);
  bytes = read_bytes (image->initramfs_path);
  data = g_bytes_get_data (bytes, &len);
  /* The testroot archive follows the base's. */
  {
    g_autoptr (AirlockGuestImage) base = ensure (p, cache, TRUE, FALSE, &error);
    gsize base_len;

    g_assert_no_error (error);
    base_bytes = read_bytes (base->initramfs_path);
    base_len = g_bytes_get_size (base_bytes);
    entries = newc_parse (data + base_len, len - base_len);
  }
  e = newc_find (entries, "airlock/testroot/usr/bin/fake-tool");
  g_assert_nonnull (e);
  g_assert_cmpuint (e->mode, ==, S_IFREG | 0755);
  g_assert_cmpmem (g_bytes_get_data (e->data, NULL), g_bytes_get_size (e->data), "#!/fake/tool\n", 13);
  e = newc_find (entries, "airlock/testroot/lib/x86_64-linux-gnu/libfake.so.1.2");
  g_assert_nonnull (e);
  g_assert_cmpuint (e->mode, ==, S_IFREG | 0644);
  e = newc_find (entries, "airlock/testroot/lib/x86_64-linux-gnu/libfake.so.1");
  g_assert_nonnull (e);
  g_assert_cmpuint (e->mode, ==, S_IFLNK | 0777);
  g_assert_cmpmem (g_bytes_get_data (e->data, NULL), g_bytes_get_size (e->data), "libfake.so.1.2", 14);
  g_assert_null (newc_find (entries, "airlock/testroot/lib/x86_64-linux-gnu/unwanted"));
  /* The extracted files do not stay in the cache. */
  {
    g_autofree char *dir = g_path_get_dirname (image->initramfs_path);
    g_autofree char *packages = g_build_filename (dir, "packages", NULL);

    g_assert_false (g_file_test (packages, G_FILE_TEST_EXISTS));
  }

  /* A file the package does not have is named, with the package. */
  g_free (ini);
  ini = g_strdup_printf ("[amd64 fake-tool]\nversion=1.0-1\nsha256=%s\nsize=%" G_GUINT64_FORMAT "\n"
                         "files=usr/bin/fake-tool;usr/bin/missing\n", sha256, (guint64) st.st_size);
  write_file (p->data_dir, "testroot.ini", ini);
  other = airlock_guest_image_ensure (AIRLOCK_ARCH_AMD64, &opts, &error);
  g_assert_null (other);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "'fake-tool'"));
  g_clear_error (&error);

  /* A path leaving the testroot is refused while reading the recipe. */
  g_free (ini);
  ini = g_strdup_printf ("[amd64 fake-tool]\nversion=1.0-1\nsha256=%s\nsize=1\n"
                         "files=../etc/passwd\n", sha256);
  write_file (p->data_dir, "testroot.ini", ini);
  other = airlock_guest_image_ensure (AIRLOCK_ARCH_AMD64, &opts, &error);
  g_assert_null (other);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE);
  g_assert_nonnull (strstr (error->message, "'../etc/passwd'"));
  g_clear_error (&error);

  /* A group that is not [ARCH PACKAGE]. */
  write_file (p->data_dir, "testroot.ini", "[strace]\nversion=1\n");
  other = airlock_guest_image_ensure (AIRLOCK_ARCH_AMD64, &opts, &error);
  g_assert_null (other);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE);
  g_assert_nonnull (strstr (error->message, "[strace]"));
}

/* ---- fetching a pinned package: apt, the snapshot archive, a local dir --- */

typedef struct {
  char *root;
  char *downloads;
  char *local;
  char *snapshot;
  char *snapshot_url;
  char *deb;          /* the fake package, in root */
  char *deb_sha256;
  guint64 deb_size;
  GPtrArray *stages;  /* progress stages, in order, without repeats */
} Fetch;

static void
fetch_progress (const char *stage, guint64 done, guint64 total, gpointer user_data)
{
  Fetch *f = user_data;

  if (f->stages->len == 0 || !g_str_equal (f->stages->pdata[f->stages->len - 1], stage))
    g_ptr_array_add (f->stages, g_strdup (stage));
}

static gint
stage_index (Fetch *f, const char *prefix)
{
  for (guint i = 0; i < f->stages->len; i++)
    if (g_str_has_prefix (f->stages->pdata[i], prefix))
      return (gint) i;
  return -1;
}

static void
fetch_setup (Fetch *f, gconstpointer user_data)
{
  g_autoptr (GError) error = NULL;
  GStatBuf st;

  f->root = g_dir_make_tmp ("airlock-test-XXXXXX", NULL);
  f->downloads = g_build_filename (f->root, "downloads", NULL);
  f->local = g_build_filename (f->root, "local", NULL);
  f->snapshot = g_build_filename (f->root, "snapshot", NULL);
  /* No test ever reaches snapshot.debian.org: a mirror on disk, empty
   * unless the test fills it. */
  f->snapshot_url = g_strconcat ("file://", f->snapshot, NULL);
  f->stages = g_ptr_array_new_with_free_func (g_free);
  g_mkdir_with_parents (f->local, 0755);
  g_mkdir_with_parents (f->snapshot, 0755);
  f->deb = make_fake_deb (f->root);
  if (!f->deb)
    return;
  f->deb_sha256 = airlock_sha256_file (f->deb, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_stat (f->deb, &st), ==, 0);
  f->deb_size = st.st_size;
}

static void
fetch_teardown (Fetch *f, gconstpointer user_data)
{
  airlock_rm_rf (f->root);
  g_free (f->root);
  g_free (f->downloads);
  g_free (f->local);
  g_free (f->snapshot);
  g_free (f->snapshot_url);
  g_free (f->deb);
  g_free (f->deb_sha256);
  g_ptr_array_unref (f->stages);
}

/* A pin apt cannot give: no such package in any archive apt knows, so
 * `apt-get download` fails from its lists, without the network. */
static AirlockKernelPin *
fake_pin (Fetch *f, const char *sha256)
{
  AirlockKernelPin *pin = g_new0 (AirlockKernelPin, 1);

  pin->package = g_strdup ("fake-tool");
  pin->version = g_strdup ("1.0-1");
  pin->sha256 = g_strdup (sha256);
  pin->size = f->deb_size;
  pin->origin = g_strdup ("test-kernels.ini");
  pin->role = AIRLOCK_PIN_KERNEL;
  return pin;
}

static void
copy_file (const char *from, const char *dir, const char *name)
{
  g_autofree char *contents = NULL;
  g_autofree char *to = g_build_filename (dir, name, NULL);
  g_autoptr (GError) error = NULL;
  gsize len;

  g_file_get_contents (from, &contents, &len, &error);
  g_assert_no_error (error);
  g_file_set_contents (to, contents, len, &error);
  g_assert_no_error (error);
}

static void
assert_no_partial_downloads (Fetch *f)
{
  g_autoptr (GDir) dir = g_dir_open (f->downloads, 0, NULL);
  const char *name;

  while (dir && (name = g_dir_read_name (dir)))
    g_assert_false (g_str_has_prefix (name, ".download-"));
}

static void
test_fetch_snapshot_urls (void)
{
  AirlockKernelPin pin = { (char *) "linux-image-6.1.0-50-amd64", (char *) "6.1.176-1", NULL, 0,
                           NULL, AIRLOCK_PIN_KERNEL };
  g_autofree char *url = airlock_snapshot_binfiles_url (AIRLOCK_SNAPSHOT_DEFAULT_URL, &pin);
  g_autofree char *slash = airlock_snapshot_binfiles_url ("https://mirror.example/snap/", &pin);
  g_autofree char *file = airlock_snapshot_file_url (AIRLOCK_SNAPSHOT_DEFAULT_URL,
                                                     "0123456789abcdef0123456789abcdef01234567");
  g_autofree char *epoch = NULL;

  g_assert_cmpstr (url, ==, "https://snapshot.debian.org/mr/binary/linux-image-6.1.0-50-amd64/"
                            "6.1.176-1/binfiles");
  g_assert_cmpstr (slash, ==, "https://mirror.example/snap/mr/binary/linux-image-6.1.0-50-amd64/"
                              "6.1.176-1/binfiles");
  g_assert_cmpstr (file, ==, "https://snapshot.debian.org/file/"
                             "0123456789abcdef0123456789abcdef01234567");
  /* An epoch's ':' is escaped in the path. */
  pin.version = (char *) "1:2.3-4";
  epoch = airlock_snapshot_binfiles_url (AIRLOCK_SNAPSHOT_DEFAULT_URL, &pin);
  g_assert_cmpstr (epoch, ==, "https://snapshot.debian.org/mr/binary/linux-image-6.1.0-50-amd64/"
                              "1%3A2.3-4/binfiles");
}

/* apt cannot give the pin, the snapshot archive has nothing: the local
 * directory's copy is checked and used, after the other two were tried. */
static void
test_fetch_local_dir_when_apt_fails (Fetch *f, gconstpointer user_data)
{
  g_autoptr (AirlockKernelPin) pin = NULL;
  AirlockPinSources sources = { f->local, f->snapshot_url };
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *want = NULL;
  g_autofree char *got = NULL;
  gsize want_len, got_len;

  if (!f->deb)
    {
      g_test_skip ("dpkg-deb is not installed");
      return;
    }
  pin = fake_pin (f, f->deb_sha256);
  copy_file (f->deb, f->local, "fake-tool_1.0-1_amd64.deb");
  path = airlock_kernel_pin_fetch (pin, AIRLOCK_ARCH_AMD64, f->downloads, &sources,
                                   fetch_progress, f, &error);
  g_assert_no_error (error);
  expected = g_build_filename (f->downloads, "fake-tool_1.0-1_amd64.deb", NULL);
  g_assert_cmpstr (path, ==, expected);
  g_assert_true (g_file_get_contents (f->deb, &want, &want_len, NULL));
  g_assert_true (g_file_get_contents (path, &got, &got_len, NULL));
  g_assert_cmpmem (got, got_len, want, want_len);
  /* In order: apt, the snapshot archive, the local directory. */
  g_assert_cmpint (stage_index (f, "download fake-tool 1.0-1"), ==, 0);
  g_assert_cmpint (stage_index (f, "download fake-tool 1.0-1 from the snapshot archive"), >, 0);
  g_assert_cmpint (stage_index (f, "copy "), >,
                   stage_index (f, "download fake-tool 1.0-1 from the snapshot archive"));
  assert_no_partial_downloads (f);

  /* Once fetched, the copy is used as it is: no source is asked again. */
  g_ptr_array_set_size (f->stages, 0);
  g_clear_pointer (&path, g_free);
  airlock_rm_rf (f->local);
  path = airlock_kernel_pin_fetch (pin, AIRLOCK_ARCH_AMD64, f->downloads, &sources,
                                   fetch_progress, f, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (path, ==, expected);
  g_assert_cmpint (stage_index (f, "download "), ==, -1);

  /* No source has it: each is named with its reason. */
  g_unlink (expected);
  g_clear_pointer (&path, g_free);
  sources.local_dir = "";
  path = airlock_kernel_pin_fetch (pin, AIRLOCK_ARCH_AMD64, f->downloads, &sources, NULL, NULL,
                                   &error);
  g_assert_null (path);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "'fake-tool' version '1.0-1'"));
  g_assert_nonnull (strstr (error->message, "apt-get download fake-tool:amd64=1.0-1): apt-get download failed"));
  g_assert_nonnull (strstr (error->message, "/mr/binary/fake-tool/1.0-1/binfiles'): curl failed"));
  g_assert_nonnull (strstr (error->message, "the local directory: none given"));
  assert_no_partial_downloads (f);
}

/* A file that does not match the pin's SHA-256 is never used: the error
 * names it with the expected and the actual digest, and nothing is left in
 * the downloads. */
static void
test_fetch_digest_mismatch_refused (Fetch *f, gconstpointer user_data)
{
  static const char other[] = "0000000000000000000000000000000000000000000000000000000000000000";
  g_autoptr (AirlockKernelPin) pin = NULL;
  g_autoptr (AirlockKernelPin) good = NULL;
  AirlockPinSources sources = { f->local, f->snapshot_url };
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *local_file = NULL;
  g_autofree char *cached = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *actual = NULL;

  if (!f->deb)
    {
      g_test_skip ("dpkg-deb is not installed");
      return;
    }
  pin = fake_pin (f, other);
  copy_file (f->deb, f->local, "fake-tool_1.0-1_amd64.deb");
  local_file = g_build_filename (f->local, "fake-tool_1.0-1_amd64.deb", NULL);
  cached = g_build_filename (f->downloads, "fake-tool_1.0-1_amd64.deb", NULL);
  path = airlock_kernel_pin_fetch (pin, AIRLOCK_ARCH_AMD64, f->downloads, &sources, NULL, NULL,
                                   &error);
  g_assert_null (path);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_DIGEST);
  expected = g_strdup_printf ("the local directory ('%s'): its sha256 is %s, the pin says %s", local_file,
                              f->deb_sha256, other);
  g_assert_nonnull (strstr (error->message, expected));
  g_assert_false (g_file_test (cached, G_FILE_TEST_EXISTS));
  assert_no_partial_downloads (f);
  g_clear_error (&error);

  /* A cached copy that does not match is named, removed and fetched again
   * from a source that has the right one. */
  g_mkdir_with_parents (f->downloads, 0755);
  write_file (f->downloads, "fake-tool_1.0-1_amd64.deb", "not the package");
  good = fake_pin (f, f->deb_sha256);
  good->size = strlen ("not the package");
  path = airlock_kernel_pin_fetch (good, AIRLOCK_ARCH_AMD64, f->downloads, &sources, NULL, NULL,
                                   &error);
  /* (its size is the pin's here, so its digest is what is compared) */
  g_assert_null (path);
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_DIGEST);
  actual = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "not the package", -1);
  g_clear_pointer (&expected, g_free);
  expected = g_strdup_printf ("'%s' (cached): its sha256 is %s, the pin says %s; removed", cached,
                              actual, f->deb_sha256);
  g_assert_nonnull (strstr (error->message, expected));
  g_assert_false (g_file_test (cached, G_FILE_TEST_EXISTS));
  g_clear_error (&error);

  write_file (f->downloads, "fake-tool_1.0-1_amd64.deb", "not the package");
  good->size = f->deb_size;
  path = airlock_kernel_pin_fetch (good, AIRLOCK_ARCH_AMD64, f->downloads, &sources, NULL, NULL,
                                   &error);
  g_assert_no_error (error);
  g_assert_cmpstr (path, ==, cached);
  g_clear_pointer (&actual, g_free);
  actual = airlock_sha256_file (path, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (actual, ==, f->deb_sha256);
}

/* The snapshot archive (a mirror of its layout on disk, through curl's
 * file:): the list of builds names this arch's file by hash, the file is
 * fetched and checked, and the local directory is not reached. */
static void
test_fetch_snapshot_before_local (Fetch *f, gconstpointer user_data)
{
  g_autoptr (AirlockKernelPin) pin = NULL;
  AirlockPinSources sources = { f->local, f->snapshot_url };
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *contents = NULL;
  g_autofree char *sha1 = NULL;
  g_autofree char *list_dir = g_build_filename (f->snapshot, "mr", "binary", "fake-tool", "1.0-1",
                                                NULL);
  g_autofree char *file_dir = g_build_filename (f->snapshot, "file", NULL);
  g_autofree char *list = NULL;
  g_autofree char *curl = g_find_program_in_path ("curl");
  g_autofree char *sha256 = NULL;
  gsize len;

  if (!f->deb || !curl)
    {
      g_test_skip (f->deb ? "curl is not installed" : "dpkg-deb is not installed");
      return;
    }
  pin = fake_pin (f, f->deb_sha256);
  g_assert_true (g_file_get_contents (f->deb, &contents, &len, NULL));
  sha1 = g_compute_checksum_for_data (G_CHECKSUM_SHA1, (const guchar *) contents, len);
  g_mkdir_with_parents (list_dir, 0755);
  g_mkdir_with_parents (file_dir, 0755);
  list = g_strdup_printf ("{\"_comment\": \"foo\", \"binary\": \"fake-tool\", "
                          "\"binary_version\": \"1.0-1\", \"result\": ["
                          "{\"architecture\": \"arm64\", \"hash\": \"%s\"}, "
                          "{\"architecture\": \"amd64\", \"hash\": \"%s\"}]}",
                          "1111111111111111111111111111111111111111", sha1);
  write_file (list_dir, "binfiles", list);
  copy_file (f->deb, file_dir, sha1);
  /* A wrong file in the local directory: had it been reached, the fetch
   * would fail. */
  write_file (f->local, "fake-tool_1.0-1_amd64.deb", "wrong");

  path = airlock_kernel_pin_fetch (pin, AIRLOCK_ARCH_AMD64, f->downloads, &sources,
                                   fetch_progress, f, &error);
  g_assert_no_error (error);
  g_assert_nonnull (path);
  sha256 = airlock_sha256_file (path, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sha256, ==, f->deb_sha256);
  g_assert_cmpint (stage_index (f, "download fake-tool 1.0-1 from the snapshot archive"), >, 0);
  g_assert_cmpint (stage_index (f, "copy "), ==, -1);
  assert_no_partial_downloads (f);
}

/* ---- images export / import --------------------------------------------- */

static void
assert_same_tree (const char *a, const char *b, const char *rel)
{
  g_autofree char *pa = g_build_filename (a, rel, NULL);
  g_autofree char *pb = g_build_filename (b, rel, NULL);
  g_autoptr (GDir) dir = g_dir_open (pa, 0, NULL);
  const char *name;
  guint n = 0;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)))
    {
      g_autofree char *child_rel = g_build_filename (rel, name, NULL);
      g_autofree char *ca = g_build_filename (a, child_rel, NULL);
      g_autofree char *cb = g_build_filename (b, child_rel, NULL);

      if (g_file_test (ca, G_FILE_TEST_IS_DIR))
        assert_same_tree (a, b, child_rel);
      else
        {
          g_autoptr (GBytes) ba = read_bytes (ca);
          g_autoptr (GBytes) bb = read_bytes (cb);

          g_assert_true (g_bytes_equal (ba, bb));
        }
      n++;
    }
  /* …and nothing more on the other side. */
  {
    g_autoptr (GDir) other = g_dir_open (pb, 0, NULL);
    guint m = 0;

    g_assert_nonnull (other);
    while (g_dir_read_name (other))
      m++;
    g_assert_cmpuint (m, ==, n);
  }
}

/* A built image exported, then imported into an empty cache: the same
 * bytes, found there by an offline lookup (so the files' times went along:
 * a lookup refuses outputs newer than their manifest); an archive with a
 * changed byte is refused naming the file and both digests, and nothing of
 * it is installed. */
static void
test_pipeline_export_import (Pipeline *p, gconstpointer user_data)
{
  g_autofree char *cache = g_build_filename (p->root, "cache", NULL);
  g_autofree char *fresh = g_build_filename (p->root, "fresh", NULL);
  g_autofree char *tampered_cache = g_build_filename (p->root, "tampered-cache", NULL);
  g_autofree char *archive = g_build_filename (p->root, "guest-images.tar", NULL);
  g_autofree char *tampered = g_build_filename (p->root, "tampered.tar", NULL);
  g_autofree char *key = NULL;
  g_autofree char *rel = NULL;
  g_autofree char *member = NULL;
  g_autofree char *contents = NULL;
  g_autofree char *guest = g_build_filename (tampered_cache, "guest", "amd64", NULL);
  g_autoptr (AirlockGuestImage) image = NULL;
  g_autoptr (AirlockGuestImage) imported = NULL;
  g_autoptr (GPtrArray) exported = NULL;
  g_autoptr (GPtrArray) installed = NULL;
  g_autoptr (GError) error = NULL;
  gboolean arches[AIRLOCK_N_ARCHES] = { [AIRLOCK_ARCH_AMD64] = TRUE };
  AirlockGuestImageOptions opts = {
    .cache_dir = cache,
    .kernel_path = p->kernel,
    .modules_dir = p->modules_dir,
  };
  const char *init;
  gsize len;

  if (!have_depmod ())
    return;
  /* Not built yet: nothing to export, and the error says so. */
  g_assert_false (airlock_guest_images_export (&opts, arches, archive, NULL, &error));
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_NOT_BUILT);
  g_clear_error (&error);
  g_assert_false (g_file_test (archive, G_FILE_TEST_EXISTS));

  image = ensure (p, cache, FALSE, FALSE, &error);
  g_assert_no_error (error);
  g_assert_true (airlock_guest_images_export (&opts, arches, archive, &exported, &error));
  g_assert_no_error (error);
  key = g_path_get_basename (image->dir);
  rel = g_build_filename ("guest", "amd64", key, NULL);
  g_assert_cmpuint (exported->len, ==, 1);
  g_assert_cmpstr (exported->pdata[0], ==, rel);

  g_assert_true (airlock_guest_images_import (fresh, archive, &installed, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (installed->len, ==, 1);
  g_assert_cmpstr (installed->pdata[0], ==, rel);
  assert_same_tree (cache, fresh, rel);
  imported = ensure (p, fresh, TRUE, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (imported->initramfs_sha256, ==, image->initramfs_sha256);
  g_assert_cmpstr (imported->kernel_sha256, ==, image->kernel_sha256);

  /* One byte of the guest's init, inside initramfs.cpio, changed. */
  g_assert_true (g_file_get_contents (archive, &contents, &len, NULL));
  init = memmem (contents, len, "#!/not/really/a/static/init", strlen ("#!/not/really/a/static/init"));
  g_assert_nonnull (init);
  contents[init - contents + 3] ^= 1;
  g_assert_true (g_file_set_contents (tampered, contents, len, NULL));
  g_assert_false (airlock_guest_images_import (tampered_cache, tampered, NULL, &error));
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_DIGEST);
  member = g_strdup_printf ("its '%s/initramfs.cpio' has sha256 ", rel);
  g_assert_nonnull (strstr (error->message, member));
  g_assert_nonnull (strstr (error->message, image->initramfs_sha256));
  g_clear_error (&error);
  g_assert_false (g_file_test (guest, G_FILE_TEST_EXISTS));

  /* Not an export at all. */
  g_assert_false (airlock_guest_images_import (tampered_cache, p->kernel, NULL, &error));
  g_assert_nonnull (error);
}

/* ---- images import: archives nobody exported ---------------------------- */

typedef struct {
  const char *name;
  const char *data;   /* NULL: a symlink to "target" */
} TarMember;

static void
write_tar (const char *path, const TarMember *members, guint n)
{
  struct archive *a = archive_write_new ();

  g_assert_cmpint (archive_write_set_format_pax (a), ==, ARCHIVE_OK);
  g_assert_cmpint (archive_write_open_filename (a, path), ==, ARCHIVE_OK);
  for (guint i = 0; i < n; i++)
    {
      struct archive_entry *e = archive_entry_new ();
      gsize len = members[i].data ? strlen (members[i].data) : 0;

      archive_entry_set_pathname (e, members[i].name);
      archive_entry_set_filetype (e, members[i].data ? AE_IFREG : AE_IFLNK);
      archive_entry_set_perm (e, 0644);
      archive_entry_set_size (e, len);
      if (!members[i].data)
        archive_entry_set_symlink (e, "target");
      g_assert_cmpint (archive_write_header (a, e), ==, ARCHIVE_OK);
      if (len)
        g_assert_cmpint (archive_write_data (a, members[i].data, len), ==, (la_ssize_t) len);
      archive_entry_free (e);
    }
  g_assert_cmpint (archive_write_close (a), ==, ARCHIVE_OK);
  archive_write_free (a);
}

/* An index listing @path with @data's size and digest. */
static char *
index_for (const char *path, const char *data)
{
  g_autofree char *sha256 = g_compute_checksum_for_string (G_CHECKSUM_SHA256, data, -1);

  return g_strdup_printf ("{\"format\": \"airlock-guest-images/1\", \"files\": ["
                          "{\"path\": \"%s\", \"size\": %zu, \"sha256\": \"%s\"}]}",
                          path, strlen (data), sha256);
}

/* Each archive is refused with its reason, and nothing of it reaches the
 * cache (nor leaves it: no path is joined that could). */
static void
test_transfer_refuses_foreign_archives (void)
{
  g_autofree char *root = g_dir_make_tmp ("airlock-test-XXXXXX", NULL);
  g_autofree char *cache = g_build_filename (root, "cache", NULL);
  g_autofree char *tar = g_build_filename (root, "x.tar", NULL);
  g_autofree char *escaped = g_build_filename (root, "escaped", NULL);
  g_autofree char *arch_dir = g_build_filename (cache, "guest", "amd64", NULL);
  const char *key = "1111111111111111111111111111111111111111111111111111111111111111";
  g_autofree char *good_path = g_strdup_printf ("guest/amd64/%s/vmlinux", key);
  g_autofree char *other_path = g_strdup_printf ("guest/amd64/%s/initramfs.cpio", key);
  g_autofree char *evil_path = g_strdup_printf ("guest/amd64/%s/../../../../escaped", key);
  g_autofree char *good_index = index_for (good_path, "kernel bytes");
  g_autofree char *evil_index = index_for (evil_path, "kernel bytes");
  g_autofree char *bad_key_index = index_for ("guest/amd64/notakey/vmlinux", "kernel bytes");
  g_autofree char *other_arch_index = index_for ("guest/riscv64/" "1111111111111111111111111111111111111111111111111111111111111111/vmlinux", "kernel bytes");
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) dirs = NULL;
  struct {
    const char *what;
    TarMember members[3];
    guint n;
    const char *message;
  } cases[] = {
    { "a path out of the cache", { { AIRLOCK_GUEST_EXPORT_INDEX, evil_index },
                                   { evil_path, "kernel bytes" } }, 2, "invalid path" },
    { "a directory that is not a cache key", { { AIRLOCK_GUEST_EXPORT_INDEX, bad_key_index },
                                               { "guest/amd64/notakey/vmlinux", "kernel bytes" } },
      2, "invalid path" },
    { "an arch airlock has not", { { AIRLOCK_GUEST_EXPORT_INDEX, other_arch_index } }, 1,
      "invalid path" },
    { "a member the index does not list", { { AIRLOCK_GUEST_EXPORT_INDEX, good_index },
                                            { good_path, "kernel bytes" },
                                            { other_path, "initramfs" } },
      3, "which its index does not list" },
    { "a listed file missing", { { AIRLOCK_GUEST_EXPORT_INDEX, good_index } }, 1,
      "which it does not hold" },
    { "a listed file twice", { { AIRLOCK_GUEST_EXPORT_INDEX, good_index },
                               { good_path, "kernel bytes" }, { good_path, "kernel bytes" } },
      3, "vmlinux' twice" },
    { "a symlink", { { AIRLOCK_GUEST_EXPORT_INDEX, good_index }, { good_path, NULL } }, 2,
      "not a regular file" },
    { "a file longer than listed", { { AIRLOCK_GUEST_EXPORT_INDEX, good_index },
                                     { good_path, "kernel bytes and more" } },
      2, "is over 12 bytes, its index says 12" },
    { "no index first", { { good_path, "kernel bytes" }, { AIRLOCK_GUEST_EXPORT_INDEX, good_index } },
      2, "not airlock-guest-images.json" },
    { "an index of another format", { { AIRLOCK_GUEST_EXPORT_INDEX, "{\"format\": \"x\"}" } }, 1,
      "is not of format" },
    { "an index with a format that is no string", { { AIRLOCK_GUEST_EXPORT_INDEX, "{\"format\": 1}" } },
      1, "is not of format" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_test_message ("%s", cases[i].what);
      write_tar (tar, cases[i].members, cases[i].n);
      g_assert_false (airlock_guest_images_import (cache, tar, NULL, &error));
      g_assert_nonnull (error);
      g_test_message ("%s", error->message);
      g_assert_nonnull (strstr (error->message, cases[i].message));
      g_clear_error (&error);
      g_assert_false (g_file_test (escaped, G_FILE_TEST_EXISTS));
      /* Nothing installed, no scratch directory left. */
      g_assert_false (g_file_test (arch_dir, G_FILE_TEST_EXISTS));
      {
        g_autofree char *guest = g_build_filename (cache, "guest", NULL);
        g_autoptr (GDir) dir = g_dir_open (guest, 0, NULL);

        g_assert_nonnull (dir);
        g_assert_null (g_dir_read_name (dir));
      }
    }

  /* The same shape, well made, is installed: the refusals above are the
   * members', not the format's. */
  {
    TarMember ok[] = { { AIRLOCK_GUEST_EXPORT_INDEX, good_index }, { good_path, "kernel bytes" } };
    g_autofree char *installed = g_build_filename (cache, good_path, NULL);
    g_autofree char *contents = NULL;

    write_tar (tar, ok, G_N_ELEMENTS (ok));
    g_assert_true (airlock_guest_images_import (cache, tar, &dirs, &error));
    g_assert_no_error (error);
    g_assert_true (g_file_get_contents (installed, &contents, NULL, NULL));
    g_assert_cmpstr (contents, ==, "kernel bytes");
  }
  airlock_rm_rf (root);
}

typedef struct {
  Pipeline *p;
  const char *cache;
  AirlockGuestImage *image;
  GError *error;
} ConcurrentBuild;

static gpointer
concurrent_build (gpointer data)
{
  ConcurrentBuild *b = data;

  b->image = ensure (b->p, b->cache, FALSE, FALSE, &b->error);
  return NULL;
}

static void
test_pipeline_concurrent (Pipeline *p, gconstpointer user_data)
{
  g_autofree char *cache = g_build_filename (p->root, "cache", NULL);
  ConcurrentBuild builds[4];
  GThread *threads[G_N_ELEMENTS (builds)];

  if (!have_depmod ())
    return;
  /* Each builder opens the lock file itself, so flock() serialises the
   * threads as it would processes. */
  for (guint i = 0; i < G_N_ELEMENTS (builds); i++)
    {
      builds[i] = (ConcurrentBuild) { p, cache, NULL, NULL };
      threads[i] = g_thread_new ("builder", concurrent_build, &builds[i]);
    }
  for (guint i = 0; i < G_N_ELEMENTS (builds); i++)
    {
      g_thread_join (threads[i]);
      g_assert_no_error (builds[i].error);
      g_assert_nonnull (builds[i].image);
      g_assert_cmpstr (builds[i].image->dir, ==, builds[0].image->dir);
      g_assert_cmpstr (builds[i].image->initramfs_sha256, ==, builds[0].image->initramfs_sha256);
    }
  for (guint i = 0; i < G_N_ELEMENTS (builds); i++)
    airlock_guest_image_free (builds[i].image);
}

/* ---- what a kernel offers the recorder (kernel-bpf.c) ---- */

/* A kernel image's bytes: @before, a BTF header and its sections (a type
 * section of @type_bytes, then the string table @strings of @strings_len
 * bytes, whose lengths the header states, @str_len_delta added to the
 * string table's), then a tail. */
static GBytes *
kernel_with_btf (const char *before, const char *type_bytes, const char *strings,
                 gsize strings_len, gint str_len_delta)
{
  GByteArray *b = g_byte_array_new ();
  guint8 header[24] = { 0x9f, 0xeb, 0x01, 0x00, 24, 0, 0, 0 };
  guint32 type_len = (guint32) strlen (type_bytes);
  guint32 fields[4] = { 0, type_len, type_len, (guint32) ((gint) strings_len + str_len_delta) };

  g_byte_array_append (b, (const guint8 *) before, (guint) strlen (before));
  for (guint i = 0; i < 4; i++)
    for (guint k = 0; k < 4; k++)
      header[8 + 4 * i + k] = (guint8) (fields[i] >> (8 * k));
  g_byte_array_append (b, header, sizeof header);
  g_byte_array_append (b, (const guint8 *) type_bytes, type_len);
  g_byte_array_append (b, (const guint8 *) strings, (guint) strings_len);
  g_byte_array_append (b, (const guint8 *) "tail of the image", 17);
  return g_byte_array_free_to_bytes (b);
}

#define STRINGS(s) s, sizeof s

static const struct {
  const char *name;
  const char *before;
  const char *types;
  const char *strings;
  gsize strings_len;
  gint str_len_delta;
  AirlockKernelBpf expect;
} kernel_bpf_cases[] = {
  /* BPF LSM's functions for both hooks the recorder attaches. */
  { "lsm", "kernel text", "TYPES", STRINGS ("\0int\0bpf_lsm_socket_connect\0bpf_lsm_socket_sendmsg\0"), 0,
    AIRLOCK_KERNEL_BPF_LSM },
  /* One of them only: not BPF LSM as the recorder needs it. */
  { "one-hook", "", "TYPES", STRINGS ("\0int\0bpf_lsm_socket_connect\0"), 0, AIRLOCK_KERNEL_BPF_BTF },
  /* A name that only ends like the hook's is another name. */
  { "suffix-only", "", "T", STRINGS ("\0xbpf_lsm_socket_connect\0xbpf_lsm_socket_sendmsg\0"), 0,
    AIRLOCK_KERNEL_BPF_BTF },
  /* The names in the type section, not the string table: not the kernel's. */
  { "names-outside-strings", "", "bpf_lsm_socket_connect\0bpf_lsm_socket_sendmsg",
    STRINGS ("\0int\0"), 0, AIRLOCK_KERNEL_BPF_BTF },
  /* The magic met by chance before the real header (a length past the
   * end follows it) is skipped. */
  { "stray-magic-first", "\x9f\xeb\x01\x7f\xff\xff\xff\xff junk",
    "TYPES", STRINGS ("\0bpf_lsm_socket_connect\0bpf_lsm_socket_sendmsg\0"), 0, AIRLOCK_KERNEL_BPF_LSM },
  /* A string table running past the image's end is no BTF. */
  { "strings-past-end", "", "TYPES", STRINGS ("\0bpf_lsm_socket_connect\0bpf_lsm_socket_sendmsg\0"), 4096,
    AIRLOCK_KERNEL_BPF_NO_BTF },
  /* Nor one that does not start with NUL (the kernel refuses it too). */
  { "strings-without-nul", "", "TYPES", "int\0bpf_lsm_socket_connect\0bpf_lsm_socket_sendmsg\0",
    sizeof "int\0bpf_lsm_socket_connect\0bpf_lsm_socket_sendmsg\0", 0, AIRLOCK_KERNEL_BPF_NO_BTF },
};

static void
test_kernel_bpf_scan (gconstpointer data)
{
  guint i = GPOINTER_TO_UINT (data);
  g_autoptr (GBytes) kernel = kernel_with_btf (kernel_bpf_cases[i].before, kernel_bpf_cases[i].types,
                                               kernel_bpf_cases[i].strings,
                                               kernel_bpf_cases[i].strings_len,
                                               kernel_bpf_cases[i].str_len_delta);
  gsize len;
  const guint8 *bytes = g_bytes_get_data (kernel, &len);

  g_assert_cmpint (airlock_kernel_bpf_scan (bytes, len), ==, kernel_bpf_cases[i].expect);
  /* Cut anywhere inside the header, it is no BTF. */
  g_assert_cmpint (airlock_kernel_bpf_scan (bytes, strlen (kernel_bpf_cases[i].before) + 20), ==,
                   AIRLOCK_KERNEL_BPF_NO_BTF);
}

static void
test_kernel_bpf_no_btf (void)
{
  static const guint8 text[] = "a kernel without any BTF header in it at all";
  g_autoptr (GError) error = NULL;
  AirlockGuestImage image = { .kernel_path = (char *) "/nonexistent/airlock-test/vmlinux" };
  AirlockKernelBpf bpf = AIRLOCK_KERNEL_BPF_LSM;

  g_assert_cmpint (airlock_kernel_bpf_scan (text, sizeof text), ==, AIRLOCK_KERNEL_BPF_NO_BTF);
  g_assert_cmpint (airlock_kernel_bpf_scan (text, 0), ==, AIRLOCK_KERNEL_BPF_NO_BTF);
  /* A kernel that cannot be read is an error naming it, not "no BTF". */
  g_assert_false (airlock_guest_image_read_kernel_bpf (&image, &bpf, &error));
  g_assert_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "/nonexistent/airlock-test/vmlinux"));
  /* Each answer has its sentence for the user. */
  g_assert_nonnull (strstr (airlock_kernel_bpf_describe (AIRLOCK_KERNEL_BPF_NO_BTF), "seccomp"));
  g_assert_nonnull (strstr (airlock_kernel_bpf_describe (AIRLOCK_KERNEL_BPF_BTF), "kprobes"));
  g_assert_nonnull (strstr (airlock_kernel_bpf_describe (AIRLOCK_KERNEL_BPF_LSM), "BPF LSM"));
}

int
main (int argc, char **argv)
{
  g_autofree char *env_root = g_dir_make_tmp ("airlock-test-XXXXXX", NULL);
  g_autofree char *data_dir = g_build_filename (env_root, "data", NULL);
  g_autofree char *guest_dir = g_build_filename (env_root, "guest", NULL);
  int status;

  g_test_init (&argc, &argv, NULL);
  /* The pipeline reads the recipe and the guest programs from these; set
   * once, before any thread exists (setenv is not thread-safe).  Each
   * pipeline test fills them in and empties them again. */
  g_setenv ("AIRLOCK_DATA_DIR", data_dir, TRUE);
  g_setenv ("AIRLOCK_GUEST_DIR", guest_dir, TRUE);
  /* A fetch that apt fails never goes on to snapshot.debian.org or a
   * directory of the user's: the fetch tests name their sources. */
  g_setenv ("AIRLOCK_SNAPSHOT_URL", "", TRUE);
  g_unsetenv ("AIRLOCK_KERNEL_DIR");

  g_test_add_func ("/guestimg/cpio/entries", test_cpio_entries);
  g_test_add_func ("/guestimg/cpio/reproducible", test_cpio_reproducible);
  g_test_add_func ("/guestimg/cpio/file-source", test_cpio_file_source);
  g_test_add_func ("/guestimg/cpio/rejects-bad-paths", test_cpio_rejects_bad_paths);
  g_test_add_func ("/guestimg/cpio/links-and-dirs", test_cpio_links_and_dirs);
  g_test_add_func ("/guestimg/bzimage/extract-xz", test_bzimage_extract_xz);
  g_test_add_func ("/guestimg/bzimage/extract-gzip", test_bzimage_extract_gzip);
  g_test_add_func ("/guestimg/bzimage/no-pvh-boots-bzimage", test_bzimage_no_pvh_boots_bzimage);
  g_test_add_func ("/guestimg/bzimage/other-compression", test_bzimage_other_compression);
  g_test_add_func ("/guestimg/bzimage/rejects-damaged", test_bzimage_rejects_damaged);
  g_test_add_func ("/guestimg/kernel/vmlinux-given", test_kernel_vmlinux_given);
  g_test_add_func ("/guestimg/kernel/arm64", test_kernel_arm64);
  g_test_add_func ("/guestimg/modules/closure-order", test_modules_closure_order);
  g_test_add_func ("/guestimg/modules/closure-cycle", test_modules_closure_cycle);
  g_test_add_func ("/guestimg/modules/strip-signature", test_modules_strip_signature);
  g_test_add_func ("/guestimg/modules/closure-missing", test_modules_closure_missing);
  g_test_add_func ("/guestimg/modules/parse-errors", test_modules_parse_errors);
  g_test_add_func ("/guestimg/recipe/kernels-ini", test_recipe_kernels_ini);
  for (guint i = 0; i < G_N_ELEMENTS (kernel_bpf_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/guestimg/kernel-bpf/%s", kernel_bpf_cases[i].name);

      g_test_add_data_func (path, GUINT_TO_POINTER (i), test_kernel_bpf_scan);
    }
  g_test_add_func ("/guestimg/kernel-bpf/no-btf", test_kernel_bpf_no_btf);
  g_test_add ("/guestimg/pipeline/build-and-cache", Pipeline, NULL, pipeline_setup,
              test_pipeline_build_and_cache, pipeline_teardown);
  g_test_add ("/guestimg/pipeline/damage-is-rebuilt", Pipeline, NULL, pipeline_setup,
              test_pipeline_damage_is_rebuilt, pipeline_teardown);
  g_test_add ("/guestimg/pipeline/input-errors", Pipeline, NULL, pipeline_setup,
              test_pipeline_input_errors, pipeline_teardown);
  g_test_add ("/guestimg/pipeline/program-change-reuses-kernel", Pipeline, NULL, pipeline_setup,
              test_pipeline_program_change, pipeline_teardown);
  g_test_add ("/guestimg/pipeline/concurrent", Pipeline, NULL, pipeline_setup,
              test_pipeline_concurrent, pipeline_teardown);
  g_test_add ("/guestimg/pipeline/testroot", Pipeline, NULL, pipeline_setup,
              test_pipeline_testroot, pipeline_teardown);
  g_test_add ("/guestimg/pipeline/testroot-packages", Pipeline, NULL, pipeline_setup,
              test_pipeline_testroot_packages, pipeline_teardown);

  g_test_add ("/guestimg/pipeline/export-import", Pipeline, NULL, pipeline_setup,
              test_pipeline_export_import, pipeline_teardown);
  g_test_add_func ("/guestimg/transfer/refuses-foreign-archives",
                   test_transfer_refuses_foreign_archives);
  g_test_add_func ("/guestimg/fetch/snapshot-urls", test_fetch_snapshot_urls);
  g_test_add ("/guestimg/fetch/local-dir-when-apt-fails", Fetch, NULL, fetch_setup,
              test_fetch_local_dir_when_apt_fails, fetch_teardown);
  g_test_add ("/guestimg/fetch/digest-mismatch-refused", Fetch, NULL, fetch_setup,
              test_fetch_digest_mismatch_refused, fetch_teardown);
  g_test_add ("/guestimg/fetch/snapshot-before-local", Fetch, NULL, fetch_setup,
              test_fetch_snapshot_before_local, fetch_teardown);

  status = g_test_run ();
  airlock_rm_rf (env_root);
  return status;
}
