/* Guest images: the kernel and initramfs each guest arch boots.
 *
 * Built from a pinned Debian kernel package (images/guest/kernels.ini:
 * package, version, sha256) or from a kernel + modules directory the user
 * points at, plus the static guest programs of this build.  The result is
 * cached under <cache>/guest/<arch>/<key>/, where key is the SHA-256 of every
 * input, so it is rebuilt only when an input changes.  Outputs are
 * reproducible: the same inputs give byte-identical files. */
#pragma once

#include "../airlock-macros.h"
#include "../arch.h"
#include "../paths.h"

G_BEGIN_DECLS

#define AIRLOCK_GUEST_IMAGE_ERROR (airlock_guest_image_error_quark ())
typedef enum {
  AIRLOCK_GUEST_IMAGE_ERROR_RECIPE,        /* kernels.ini / modules.list missing or invalid */
  AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE,   /* pinned package cannot be downloaded */
  AIRLOCK_GUEST_IMAGE_ERROR_DIGEST,        /* downloaded package does not match its pin */
  AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT, /* kernel file not a bzImage/vmlinux/Image we can boot */
  AIRLOCK_GUEST_IMAGE_ERROR_MODULES,       /* a required module (or modules dir) is missing */
  AIRLOCK_GUEST_IMAGE_ERROR_GUEST_PROGRAM, /* static guest program missing */
  AIRLOCK_GUEST_IMAGE_ERROR_NOT_BUILT,     /* offline lookup found no cached image */
  AIRLOCK_GUEST_IMAGE_ERROR_FAILED,        /* a tool or I/O step failed; message says which */
} AirlockGuestImageError;

AIRLOCK_PUBLIC GQuark airlock_guest_image_error_quark (void);

typedef struct _AirlockGuestImage {
  AirlockArch arch;
  char *dir;              /* the cache directory holding the files below */
  char *kernel_path;      /* amd64: vmlinux (ELF, PVH entry); arm64: Image */
  char *initramfs_path;   /* newc cpio: /init, modules, modules.dep; with_testroot: that
                           * archive followed by the testroot's (a file of its own);
                           * with_shell: followed by the static shell's */
  char *manifest_path;    /* manifest.json: inputs and outputs with sha256 */
  char *kernel_release;   /* "6.1.0-50-amd64" */
  char *kernel_sha256;    /* of kernel_path */
  char *initramfs_sha256; /* of initramfs_path */
  char *kernel_source;    /* "debian linux-image-6.1.0-50-amd64 6.1.176-1 sha256:…" or "custom /path" */
} AirlockGuestImage;

typedef struct {
  const char *cache_dir;    /* NULL: airlock_default_cache_dir () */
  const char *kernel_path;  /* custom kernel (bzImage, vmlinux or arm64 Image); NULL: pinned package */
  const char *modules_dir;  /* with kernel_path: its lib/modules/<release> directory */
  gboolean force;           /* rebuild even when cached */
  gboolean offline;         /* never download or build: only find a cached image */
  gboolean with_testroot;   /* initramfs_path also holds /airlock/testroot: the test
                             * programs (tests/guest) that `airlock run --guest-program`
                             * and the VM tests run under the supervisor, from
                             * $AIRLOCK_GUEST_DIR (testprog-<arch>, …); cached
                             * beside the image in <arch>/testroot-<key>/ */
  AirlockProgressFunc progress;
  gpointer progress_data;
  gboolean with_shell;      /* initramfs_path also holds /airlock/shell: airlock's static
                             * shell (bin/sh, a static busybox from the pin in the data
                             * dir's shell.ini) that `airlock shell` binds into an image
                             * without one; cached beside the image in <arch>/shell-<key>/ */
  const char *kernel_dir;   /* a directory holding the pinned kernel's .deb, tried when
                             * apt and the snapshot archive cannot give it; NULL:
                             * $AIRLOCK_KERNEL_DIR */
} AirlockGuestImageOptions;

/* Returns the guest image for @arch, building it if needed (with progress
 * reported through @options->progress).  Returns NULL with @error set, the
 * message naming the input and the reason.  Safe when two processes build the
 * same image at once (the second waits on a lock, then reuses the result). */
AIRLOCK_PUBLIC AirlockGuestImage *airlock_guest_image_ensure (AirlockArch arch,
                                                              const AirlockGuestImageOptions *options,
                                                              GError **error);
AIRLOCK_PUBLIC void airlock_guest_image_free (AirlockGuestImage *image);

/* ---- moving built images between machines (transfer.c) ---- */

/* Writes the guest images cached for @options (cache_dir, and kernel_path
 * with modules_dir for a custom kernel; as `airlock images build` takes
 * them) for the arches set in @arches (indexed by AirlockArch) to @file,
 * replaced in one step.
 * Each arch's image must be built (AIRLOCK_GUEST_IMAGE_ERROR_NOT_BUILT
 * naming it otherwise); its variants go along when they are.  Returns the
 * exported cache directories ("guest/amd64/<key>", …) in @ret_dirs. */
AIRLOCK_PUBLIC gboolean airlock_guest_images_export (const AirlockGuestImageOptions *options,
                                                     const gboolean *arches, const char *file, GPtrArray **ret_dirs, GError **error);

/* Checks and installs the archive @file into @cache_dir (NULL: the
 * default): its index first, then every member against it (a path it does
 * not list, a second copy, a wrong size or SHA-256 is refused, naming the
 * member and both digests: AIRLOCK_GUEST_IMAGE_ERROR_DIGEST), all of it in
 * a scratch directory; only when every file checks out are the directories
 * moved into the cache, each in one step under its arch's lock.  Returns
 * the installed directories in @ret_dirs. */
AIRLOCK_PUBLIC gboolean airlock_guest_images_import (const char *cache_dir, const char *file,
                                      GPtrArray **ret_dirs, GError **error);

/* ---- kernel files (bzimage.c) ---- */

/* The arch a kernel file is for, from its headers (bzImage, ELF machine,
 * arm64 Image magic, gzip → unknown).  FALSE when it cannot tell. */
AIRLOCK_PUBLIC gboolean airlock_kernel_guess_arch (const guint8 *data, gsize len, AirlockArch *ret_arch);

/* ---- what the kernel offers the recorder (kernel-bpf.c) ---- */

/* What a guest kernel offers the kernel-hook recorder (docs/supervisor.md),
 * read from the BTF built into its image: known before a boot. */
typedef enum {
  AIRLOCK_KERNEL_BPF_NO_BTF, /* no BTF: the recorder cannot load; seccomp records alone */
  AIRLOCK_KERNEL_BPF_BTF,    /* BTF without BPF LSM: kprobes, which cannot refuse a call */
  AIRLOCK_KERNEL_BPF_LSM,    /* BTF and BPF LSM's hooks */
} AirlockKernelBpf;

/* Reads @image's kernel (kernel_path) and says what it offers the recorder
 * in *@ret_bpf.  FALSE with AIRLOCK_GUEST_IMAGE_ERROR_FAILED, naming the
 * file, when it cannot be read. */
AIRLOCK_PUBLIC gboolean airlock_guest_image_read_kernel_bpf (const AirlockGuestImage *image,
                                                             AirlockKernelBpf *ret_bpf,
                                                             GError **error);

/* One sentence for a user: what @bpf means for a run (which recorder, and
 * what it cannot do).  Static. */
AIRLOCK_PUBLIC const char *airlock_kernel_bpf_describe (AirlockKernelBpf bpf);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockGuestImage, airlock_guest_image_free)

G_END_DECLS
