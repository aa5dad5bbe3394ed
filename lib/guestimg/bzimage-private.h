/* Guest kernels: from what a package or a user provides (x86 bzImage,
 * vmlinux ELF, arm64 Image, gzip-compressed Image) to what QEMU boots
 * fastest.
 *
 * amd64 boots the vmlinux ELF through its PVH entry (about 2 s under TCG,
 * against about 5 s for the bzImage, which spends the difference
 * decompressing itself), so the vmlinux is extracted from the bzImage once
 * and cached. */
#pragma once

#include "airlock-macros.h"
#include "arch.h"
#include "guestimg/guest-image.h" /* airlock_kernel_guess_arch */

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  AIRLOCK_BOOT_KERNEL_VMLINUX_PVH,   /* amd64 ELF with a PVH entry note */
  AIRLOCK_BOOT_KERNEL_BZIMAGE,       /* amd64 bzImage, booted as is */
  AIRLOCK_BOOT_KERNEL_ARM64_IMAGE,   /* arm64 Image, uncompressed */
} AirlockBootKernelFormat;

typedef struct {
  AirlockBootKernelFormat format;
  GBytes *image;   /* the bytes to boot */
  char *file_name; /* "vmlinux", "bzImage" or "Image" */
  char *how;       /* how @image was obtained, for the manifest and the CLI */
  char *release;   /* from the kernel's banner or bzImage header; NULL if not found */
} AirlockBootKernel;

void airlock_boot_kernel_free (AirlockBootKernel *kernel);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockBootKernel, airlock_boot_kernel_free)

/* Turns the kernel file @contents into the kernel to boot on @arch.  @what
 * names the kernel in messages ("kernel package 'linux-image-…' version
 * '…'", "kernel '/path'").  Returns NULL with
 * AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT when the file is not a kernel for
 * @arch that airlock can boot, or is damaged. */
AirlockBootKernel *airlock_boot_kernel_prepare (AirlockArch arch, GBytes *contents,
                                                const char *what, GError **error);

/* Name of the compression of a bzImage's payload ("xz", "gzip", "zstd",
 * "lz4", …; "unknown" when no magic matches).  NULL with
 * AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT when @data is not a bzImage with a
 * payload inside it (bad magic, protocol older than 2.08, truncated). */
const char *airlock_bzimage_payload_compression (const guint8 *data, gsize len,
                                                 const char *what, GError **error);

/* The decompressed payload of an xz or gzip bzImage (the vmlinux ELF),
 * checked against the size the build appended to it.  NULL with
 * AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT otherwise, naming the compression
 * when it is one airlock cannot decompress. */
GBytes *airlock_bzimage_extract_vmlinux (const guint8 *data, gsize len, const char *what,
                                         GError **error);

/* TRUE if @data is an ELF64 x86-64 file whose PT_NOTE segments hold a Xen
 * XEN_ELFNOTE_PHYS32_ENTRY note: QEMU's PVH boot needs it. */
gboolean airlock_elf_x86_64_has_pvh_note (const guint8 *data, gsize len);

/* The release in the first "Linux version <release> " banner in @data, or
 * NULL. */
char *airlock_kernel_find_release (const guint8 *data, gsize len);

/* The first xz stream / gzip member in @in, decompressed.  @size_hint
 * (0: unknown) sizes the first buffer.  NULL with
 * AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT ("cannot use @what: …") when the
 * data is truncated or corrupt, or would exceed 1 GiB. */
GBytes *airlock_xz_decompress (const guint8 *in, gsize in_len, gsize size_hint, const char *what,
                               GError **error);
GBytes *airlock_gzip_decompress (const guint8 *in, gsize in_len, gsize size_hint,
                                 const char *what, GError **error);

G_END_DECLS
