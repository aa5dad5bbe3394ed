#define _GNU_SOURCE

#include "config.h"

#include "guestimg/bzimage-private.h"

#include "guestimg/guest-image.h"

#include <gio/gio.h>
#include <lzma.h>
#include <string.h>

/* x86 boot protocol (Documentation/arch/x86/boot.rst): offsets in the real-
 * mode header at the start of a bzImage. */
#define BZ_SETUP_SECTS 0x1f1
#define BZ_HEADER_MAGIC 0x202      /* "HdrS" */
#define BZ_VERSION 0x206
#define BZ_KERNEL_VERSION 0x20e    /* offset of the version string, minus 0x200 */
#define BZ_PAYLOAD_OFFSET 0x248    /* from the protected-mode code; protocol >= 2.08 */
#define BZ_PAYLOAD_LENGTH 0x24c
#define BZ_MIN_VERSION 0x0208

/* arm64 Image header (Documentation/arch/arm64/booting.rst). */
#define ARM64_IMAGE_MAGIC_OFFSET 0x38
#define ARM64_IMAGE_MAGIC "ARM\x64"

/* EFI zboot (drivers/firmware/efi/libstub/zboot-header.S): a PE file whose
 * DOS header carries "zimg", the payload's offset and size, and the
 * compression's name. */
#define ZBOOT_TYPE_OFFSET 4
#define ZBOOT_PAYLOAD_OFFSET 8
#define ZBOOT_PAYLOAD_SIZE 12
#define ZBOOT_COMPRESSION 0x18
#define ZBOOT_COMPRESSION_LEN 32

#define ELF_MACHINE_X86_64 62
#define ELF_MACHINE_AARCH64 183
#define ELF_PT_NOTE 4
#define XEN_ELFNOTE_PHYS32_ENTRY 18

/* No kernel we boot comes near this; a bigger output means a damaged or
 * hostile file, and we stop before it fills memory. */
#define MAX_KERNEL_SIZE ((gsize) 1 << 30)
/* A size hint read from the file is only trusted this far. */
#define INITIAL_BUFFER_MAX ((gsize) 256 << 20)

void
airlock_boot_kernel_free (AirlockBootKernel *kernel)
{
  if (!kernel)
    return;
  g_clear_pointer (&kernel->image, g_bytes_unref);
  g_free (kernel->file_name);
  g_free (kernel->how);
  g_free (kernel->release);
  g_free (kernel);
}

static guint16
get_le16 (const guint8 *p)
{
  return (guint16) (p[0] | (p[1] << 8));
}

static guint32
get_le32 (const guint8 *p)
{
  return (guint32) p[0] | ((guint32) p[1] << 8) | ((guint32) p[2] << 16) | ((guint32) p[3] << 24);
}

static guint64
get_le64 (const guint8 *p)
{
  return (guint64) get_le32 (p) | ((guint64) get_le32 (p + 4) << 32);
}

static gboolean
is_bzimage (const guint8 *data, gsize len)
{
  return len >= BZ_HEADER_MAGIC + 4 && memcmp (data + BZ_HEADER_MAGIC, "HdrS", 4) == 0;
}

static gboolean
is_elf (const guint8 *data, gsize len)
{
  return len >= 64 && memcmp (data, "\x7f" "ELF", 4) == 0;
}

/* e_machine of a little-endian ELF64 file; 0 for anything else. */
static guint
elf64_machine (const guint8 *data, gsize len)
{
  if (!is_elf (data, len) || data[4] != 2 /* ELFCLASS64 */ || data[5] != 1 /* LSB */)
    return 0;
  return get_le16 (data + 18);
}

static gboolean
is_arm64_image (const guint8 *data, gsize len)
{
  return len >= 64 && memcmp (data + ARM64_IMAGE_MAGIC_OFFSET, ARM64_IMAGE_MAGIC, 4) == 0;
}

static gboolean
is_zboot (const guint8 *data, gsize len)
{
  return len >= ZBOOT_COMPRESSION + ZBOOT_COMPRESSION_LEN && data[0] == 'M' && data[1] == 'Z'
         && memcmp (data + ZBOOT_TYPE_OFFSET, "zimg", 4) == 0;
}

static gboolean
is_gzip (const guint8 *data, gsize len)
{
  return len >= 2 && data[0] == 0x1f && data[1] == 0x8b;
}

gboolean
airlock_kernel_guess_arch (const guint8 *data, gsize len, AirlockArch *ret_arch)
{
  AirlockArch arch;

  if (is_bzimage (data, len) || elf64_machine (data, len) == ELF_MACHINE_X86_64)
    arch = AIRLOCK_ARCH_AMD64;
  else if (is_arm64_image (data, len) || elf64_machine (data, len) == ELF_MACHINE_AARCH64)
    arch = AIRLOCK_ARCH_ARM64;
  else
    return FALSE;
  if (ret_arch)
    *ret_arch = arch;
  return TRUE;
}

static const struct {
  const char *name;
  const guint8 magic[6];
  gsize len;
} compressions[] = {
  { "xz", { 0xfd, '7', 'z', 'X', 'Z', 0x00 }, 6 },
  { "gzip", { 0x1f, 0x8b }, 2 },
  { "zstd", { 0x28, 0xb5, 0x2f, 0xfd }, 4 },
  { "lz4", { 0x02, 0x21, 0x4c, 0x18 }, 4 },
  { "lzo", { 0x89, 'L', 'Z', 'O' }, 4 },
  { "bzip2", { 'B', 'Z', 'h' }, 3 },
  { "lzma", { 0x5d, 0x00, 0x00 }, 3 },
};

static const char *
compression_of (const guint8 *data, gsize len)
{
  for (guint i = 0; i < G_N_ELEMENTS (compressions); i++)
    if (len >= compressions[i].len && memcmp (data, compressions[i].magic, compressions[i].len) == 0)
      return compressions[i].name;
  return "unknown";
}

/* Finds the payload inside a bzImage: the compressed vmlinux followed by its
 * decompressed size (4 bytes, little-endian), as the x86 build lays it out. */
static gboolean
bzimage_payload (const guint8 *data, gsize len, const char *what, const guint8 **ret_payload,
                 gsize *ret_len, GError **error)
{
  guint setup_sects;
  guint version;
  guint64 start, offset, length;

  if (!is_bzimage (data, len) || len < BZ_PAYLOAD_LENGTH + 4)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                   "cannot use %s: not a bzImage (no 'HdrS' boot header)", what);
      return FALSE;
    }
  version = get_le16 (data + BZ_VERSION);
  if (version < BZ_MIN_VERSION)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                   "cannot use %s: bzImage boot protocol %u.%02u is older than 2.08, "
                   "which first records where the compressed kernel is",
                   what, version >> 8, version & 0xff);
      return FALSE;
    }
  /* A setup_sects of 0 means 4, for compatibility with ancient kernels. */
  setup_sects = data[BZ_SETUP_SECTS] ? data[BZ_SETUP_SECTS] : 4;
  start = (guint64) (setup_sects + 1) * 512;
  offset = get_le32 (data + BZ_PAYLOAD_OFFSET);
  length = get_le32 (data + BZ_PAYLOAD_LENGTH);
  if (length < 8 || start + offset + length > len)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                   "cannot use %s: the bzImage header places its %" G_GUINT64_FORMAT
                   "-byte payload at %" G_GUINT64_FORMAT ", outside the %" G_GSIZE_FORMAT
                   "-byte file (truncated?)", what, length, start + offset, len);
      return FALSE;
    }
  *ret_payload = data + start + offset;
  *ret_len = length;
  return TRUE;
}

const char *
airlock_bzimage_payload_compression (const guint8 *data, gsize len, const char *what,
                                     GError **error)
{
  const guint8 *payload;
  gsize payload_len;

  if (!bzimage_payload (data, len, what, &payload, &payload_len, error))
    return NULL;
  return compression_of (payload, payload_len);
}

GBytes *
airlock_xz_decompress (const guint8 *in, gsize in_len, gsize size_hint, const char *what, GError **error)
{
  lzma_stream strm = LZMA_STREAM_INIT;
  gsize cap = CLAMP (size_hint, 1 << 20, INITIAL_BUFFER_MAX);
  g_autofree guint8 *out = g_malloc (cap);
  lzma_ret r;

  /* Without LZMA_CONCATENATED the decoder stops at the end of the first
   * stream, before the size the kernel build appends. */
  r = lzma_stream_decoder (&strm, UINT64_MAX, 0);
  if (r != LZMA_OK)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot use %s: liblzma cannot start a decoder (error %d)", what, (int) r);
      return NULL;
    }
  strm.next_in = in;
  strm.avail_in = in_len;
  for (;;)
    {
      if (strm.total_out == cap)
        {
          if (cap == MAX_KERNEL_SIZE)
            {
              lzma_end (&strm);
              g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                           "cannot use %s: it decompresses to more than %" G_GSIZE_FORMAT " bytes",
                           what, (gsize) MAX_KERNEL_SIZE);
              return NULL;
            }
          cap = MIN (cap * 2, MAX_KERNEL_SIZE);
          out = g_realloc (out, cap);
        }
      strm.next_out = out + strm.total_out;
      strm.avail_out = cap - strm.total_out;
      r = lzma_code (&strm, LZMA_FINISH);
      if (r == LZMA_STREAM_END)
        break;
      if (r != LZMA_OK)
        {
          const char *why = r == LZMA_BUF_ERROR ? "the xz data is truncated"
                            : r == LZMA_DATA_ERROR ? "the xz data is corrupt"
                            : r == LZMA_FORMAT_ERROR ? "the xz header is invalid"
                            : r == LZMA_OPTIONS_ERROR ? "the xz data uses unsupported options"
                            : "liblzma failed";
          lzma_end (&strm);
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                       "cannot use %s: %s (liblzma error %d)", what, why, (int) r);
          return NULL;
        }
    }
  cap = strm.total_out;
  lzma_end (&strm);
  return g_bytes_new_take (g_realloc (g_steal_pointer (&out), cap), cap);
}

GBytes *
airlock_gzip_decompress (const guint8 *in, gsize in_len, gsize size_hint, const char *what, GError **error)
{
  g_autoptr (GZlibDecompressor) z = g_zlib_decompressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP);
  gsize cap = CLAMP (size_hint, 1 << 20, INITIAL_BUFFER_MAX);
  g_autofree guint8 *out = g_malloc (cap);
  gsize in_pos = 0, out_len = 0;

  for (;;)
    {
      g_autoptr (GError) local_error = NULL;
      GConverterResult res;
      gsize nread = 0, nwritten = 0;

      if (out_len == cap)
        {
          if (cap == MAX_KERNEL_SIZE)
            {
              g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                           "cannot use %s: it decompresses to more than %" G_GSIZE_FORMAT " bytes",
                           what, (gsize) MAX_KERNEL_SIZE);
              return NULL;
            }
          cap = MIN (cap * 2, MAX_KERNEL_SIZE);
          out = g_realloc (out, cap);
        }
      res = g_converter_convert (G_CONVERTER (z), in + in_pos, in_len - in_pos, out + out_len,
                                 cap - out_len, G_CONVERTER_INPUT_AT_END, &nread, &nwritten,
                                 &local_error);
      if (res == G_CONVERTER_ERROR)
        {
          if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_NO_SPACE))
            {
              /* Make the next round grow the buffer. */
              out_len = cap;
              continue;
            }
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                       "cannot use %s: the gzip data is truncated or corrupt (%s)",
                       what, local_error->message);
          return NULL;
        }
      in_pos += nread;
      out_len += nwritten;
      if (res == G_CONVERTER_FINISHED)
        break;
    }
  return g_bytes_new_take (g_realloc (g_steal_pointer (&out), out_len), out_len);
}

GBytes *
airlock_bzimage_extract_vmlinux (const guint8 *data, gsize len, const char *what, GError **error)
{
  const guint8 *payload;
  gsize payload_len;
  const char *compression;
  g_autoptr (GBytes) vmlinux = NULL;
  guint32 declared;

  if (!bzimage_payload (data, len, what, &payload, &payload_len, error))
    return NULL;
  compression = compression_of (payload, payload_len);
  declared = get_le32 (payload + payload_len - 4);
  if (g_str_equal (compression, "xz"))
    vmlinux = airlock_xz_decompress (payload, payload_len - 4, declared, what, error);
  else if (g_str_equal (compression, "gzip"))
    vmlinux = airlock_gzip_decompress (payload, payload_len - 4, declared, what, error);
  else
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                   "cannot use %s: its bzImage payload is %s-compressed; airlock extracts "
                   "the vmlinux from xz or gzip payloads only", what, compression);
      return NULL;
    }
  if (!vmlinux)
    return NULL;
  /* The build appends the decompressed size: a mismatch means the payload
   * is not what the header says it is. */
  if (g_bytes_get_size (vmlinux) != declared)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                   "cannot use %s: its bzImage payload decompresses to %" G_GSIZE_FORMAT
                   " bytes, but the bzImage declares %u", what, g_bytes_get_size (vmlinux),
                   declared);
      return NULL;
    }
  return g_steal_pointer (&vmlinux);
}

gboolean
airlock_elf_x86_64_has_pvh_note (const guint8 *data, gsize len)
{
  guint64 phoff;
  guint phentsize, phnum;

  if (elf64_machine (data, len) != ELF_MACHINE_X86_64)
    return FALSE;
  phoff = get_le64 (data + 32);
  phentsize = get_le16 (data + 54);
  phnum = get_le16 (data + 56);
  if (phentsize < 56 || phoff > len || (guint64) phnum * phentsize > len - phoff)
    return FALSE;

  for (guint i = 0; i < phnum; i++)
    {
      const guint8 *ph = data + phoff + (guint64) i * phentsize;
      guint64 offset = get_le64 (ph + 8);
      guint64 size = get_le64 (ph + 32);   /* p_filesz */
      guint64 pos;

      if (get_le32 (ph) != ELF_PT_NOTE || offset > len || size > len - offset)
        continue;
      /* Notes: namesz, descsz, type, then name and desc, each padded to 4. */
      for (pos = 0; pos + 12 <= size;)
        {
          const guint8 *note = data + offset + pos;
          guint64 namesz = get_le32 (note);
          guint64 descsz = get_le32 (note + 4);
          guint32 type = get_le32 (note + 8);
          guint64 next = pos + 12 + ((namesz + 3) & ~(guint64) 3) + ((descsz + 3) & ~(guint64) 3);

          if (next > size)
            break;
          if (type == XEN_ELFNOTE_PHYS32_ENTRY && namesz == 4 && memcmp (note + 12, "Xen", 4) == 0
              && descsz >= 4)
            return TRUE;
          pos = next;
        }
    }
  return FALSE;
}

static gboolean
is_release_char (guint8 c)
{
  return g_ascii_isalnum (c) || c == '.' || c == '-' || c == '_' || c == '+' || c == '~';
}

/* A release as the kernel spells it: "6.1.0-50-amd64".  @len bounds the
 * scan; the release ends at the first character that cannot be in one. */
static char *
release_at (const guint8 *p, gsize len)
{
  gsize n = 0;

  while (n < len && n < 64 && is_release_char (p[n]))
    n++;
  if (n == 0 || n == 64 || !g_ascii_isdigit (p[0]))
    return NULL;
  return g_strndup ((const char *) p, n);
}

char *
airlock_kernel_find_release (const guint8 *data, gsize len)
{
  static const char banner[] = "Linux version ";
  const guint8 *p = data;
  const guint8 *end = data + len;

  while (p < end)
    {
      const guint8 *hit = memmem (p, end - p, banner, sizeof banner - 1);
      char *release;

      if (!hit)
        break;
      hit += sizeof banner - 1;
      release = release_at (hit, end - hit);
      if (release)
        return release;
      p = hit;
    }
  return NULL;
}

/* The release in the bzImage header's version string ("6.1.0-50-amd64
 * (debian-kernel@…) #1 SMP …"), which is readable without decompressing. */
static char *
bzimage_release (const guint8 *data, gsize len)
{
  guint64 offset;

  if (len < BZ_KERNEL_VERSION + 2)
    return NULL;
  offset = (guint64) get_le16 (data + BZ_KERNEL_VERSION) + 0x200;
  if (get_le16 (data + BZ_KERNEL_VERSION) == 0 || offset >= len)
    return NULL;
  return release_at (data + offset, len - offset);
}

static AirlockBootKernel *
boot_kernel_new (AirlockBootKernelFormat format, GBytes *image, const char *file_name,
                 char *how, char *release)
{
  AirlockBootKernel *k = g_new0 (AirlockBootKernel, 1);

  k->format = format;
  k->image = g_bytes_ref (image);
  k->file_name = g_strdup (file_name);
  k->how = how;
  k->release = release;
  return k;
}

static AirlockBootKernel *
prepare_amd64 (GBytes *contents, const char *what, GError **error)
{
  gsize len;
  const guint8 *data = g_bytes_get_data (contents, &len);
  const char *compression;
  g_autoptr (GBytes) vmlinux = NULL;
  const guint8 *vdata;
  gsize vlen;

  if (is_elf (data, len))
    {
      if (elf64_machine (data, len) != ELF_MACHINE_X86_64)
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                       "cannot use %s: it is an ELF file, but not a 64-bit x86-64 one", what);
          return NULL;
        }
      if (!airlock_elf_x86_64_has_pvh_note (data, len))
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                       "cannot use %s: this vmlinux has no PVH entry note (built without "
                       "CONFIG_PVH), so QEMU cannot boot it directly; pass the bzImage instead",
                       what);
          return NULL;
        }
      return boot_kernel_new (AIRLOCK_BOOT_KERNEL_VMLINUX_PVH, contents, "vmlinux",
                              g_strdup ("vmlinux as given (PVH entry)"),
                              airlock_kernel_find_release (data, len));
    }
  if (!is_bzimage (data, len))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                   "cannot use %s: it is %s, not an amd64 kernel (a bzImage or a vmlinux ELF)",
                   what, is_arm64_image (data, len) ? "an arm64 Image" : "neither a bzImage nor an ELF file");
      return NULL;
    }

  compression = airlock_bzimage_payload_compression (data, len, what, error);
  if (!compression)
    return NULL;
  if (!g_str_equal (compression, "xz") && !g_str_equal (compression, "gzip"))
    {
      /* Still bootable, only slower: the kernel decompresses itself. */
      return boot_kernel_new (AIRLOCK_BOOT_KERNEL_BZIMAGE, contents, "bzImage",
                              g_strdup_printf ("bzImage booted as is: its payload is %s-compressed "
                                               "and airlock extracts the vmlinux from xz or gzip "
                                               "payloads only (boots slower under TCG)",
                                               compression),
                              bzimage_release (data, len));
    }
  vmlinux = airlock_bzimage_extract_vmlinux (data, len, what, error);
  if (!vmlinux)
    return NULL;
  vdata = g_bytes_get_data (vmlinux, &vlen);
  if (elf64_machine (vdata, vlen) != ELF_MACHINE_X86_64)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                   "cannot use %s: the bzImage payload is not an x86-64 ELF vmlinux", what);
      return NULL;
    }
  if (!airlock_elf_x86_64_has_pvh_note (vdata, vlen))
    return boot_kernel_new (AIRLOCK_BOOT_KERNEL_BZIMAGE, contents, "bzImage",
                            g_strdup ("bzImage booted as is: its vmlinux has no PVH entry note "
                                      "(CONFIG_PVH is off; boots slower under TCG)"),
                            bzimage_release (data, len));
  return boot_kernel_new (AIRLOCK_BOOT_KERNEL_VMLINUX_PVH, vmlinux, "vmlinux",
                          g_strdup_printf ("vmlinux extracted from the %s bzImage (PVH entry)",
                                           compression),
                          airlock_kernel_find_release (vdata, vlen));
}

static AirlockBootKernel *
prepare_arm64 (GBytes *contents, const char *what, GError **error)
{
  gsize len;
  const guint8 *data = g_bytes_get_data (contents, &len);
  g_autoptr (GBytes) image = NULL;
  g_autofree char *how = NULL;
  const guint8 *idata;
  gsize ilen;

  if (is_arm64_image (data, len))
    return boot_kernel_new (AIRLOCK_BOOT_KERNEL_ARM64_IMAGE, contents, "Image",
                            g_strdup ("Image as given"), airlock_kernel_find_release (data, len));

  if (is_gzip (data, len))
    {
      /* A gzip file ends with its decompressed size modulo 2^32. */
      image = airlock_gzip_decompress (data, len, len >= 4 ? get_le32 (data + len - 4) : 0, what, error);
      how = g_strdup ("Image decompressed from gzip");
    }
  else if (is_zboot (data, len))
    {
      guint64 offset = get_le32 (data + ZBOOT_PAYLOAD_OFFSET);
      guint64 size = get_le32 (data + ZBOOT_PAYLOAD_SIZE);
      g_autofree char *compression = g_strndup ((const char *) data + ZBOOT_COMPRESSION,
                                                ZBOOT_COMPRESSION_LEN);

      if (offset > len || size > len - offset)
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                       "cannot use %s: its EFI zboot header places the payload outside the file "
                       "(truncated?)", what);
          return NULL;
        }
      if (g_str_equal (compression, "gzip"))
        image = airlock_gzip_decompress (data + offset, size, 0, what, error);
      else if (g_str_has_prefix (compression, "xz"))
        image = airlock_xz_decompress (data + offset, size, 0, what, error);
      else
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                       "cannot use %s: it is an EFI zboot image with %s compression; airlock "
                       "decompresses gzip and xz only (pass the plain Image)",
                       what, g_utf8_validate (compression, -1, NULL) ? compression : "unknown");
          return NULL;
        }
      how = g_strdup_printf ("Image decompressed from an EFI zboot %s image", compression);
    }
  else
    {
      AirlockArch other;
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                   "cannot use %s: %s", what,
                   elf64_machine (data, len) == ELF_MACHINE_AARCH64
                     ? "it is a vmlinux ELF; arm64 guests boot the Image (arch/arm64/boot/Image)"
                   : airlock_kernel_guess_arch (data, len, &other) && other == AIRLOCK_ARCH_AMD64
                     ? "it is an amd64 kernel, not an arm64 Image"
                     : "it is not an arm64 Image (no 'ARM\\x64' magic at offset 0x38)");
      return NULL;
    }
  if (!image)
    return NULL;
  idata = g_bytes_get_data (image, &ilen);
  if (!is_arm64_image (idata, ilen))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                   "cannot use %s: it decompresses to something that is not an arm64 Image", what);
      return NULL;
    }
  return boot_kernel_new (AIRLOCK_BOOT_KERNEL_ARM64_IMAGE, image, "Image", g_steal_pointer (&how),
                          airlock_kernel_find_release (idata, ilen));
}

AirlockBootKernel *
airlock_boot_kernel_prepare (AirlockArch arch, GBytes *contents, const char *what, GError **error)
{
  g_return_val_if_fail (contents != NULL && what != NULL, NULL);

  switch (arch)
    {
    case AIRLOCK_ARCH_AMD64:
      return prepare_amd64 (contents, what, error);
    case AIRLOCK_ARCH_ARM64:
      return prepare_arm64 (contents, what, error);
    }
  g_return_val_if_reached (NULL);
}
