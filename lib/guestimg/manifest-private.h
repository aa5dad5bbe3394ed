/* What a guest image is made from and what it is made of, and its
 * manifest.json, which records both with their digests and lets a later
 * lookup find and check the cached image. */
#pragma once

#include "airlock-macros.h"
#include "guestimg/bzimage-private.h"
#include "guestimg/guest-image.h"
#include "guestimg/modules-private.h"
#include "guestimg/recipe-private.h"

G_BEGIN_DECLS

/* Part of every cache key and manifest.  Bump it whenever the same inputs
 * would give different outputs (a new file in the initramfs, another
 * layout), so images built by an older airlock are not reused. */
#define AIRLOCK_GUEST_IMAGE_BUILDER "airlock-guest-image/2"

#define AIRLOCK_GUEST_MANIFEST_FILE "manifest.json"
#define AIRLOCK_GUEST_STAGE_MANIFEST_FILE "kernel.json"
#define AIRLOCK_GUEST_INITRAMFS_FILE "initramfs.cpio"

typedef struct {
  const char *name;     /* "init": the file is <name>-<arch> */
  const char *path;     /* in the initramfs: "init" */
  guint mode;
  char *host_path;
  char *sha256;
} AirlockGuestProgram;

/* Everything the image is made from.  The cache key is a hash of these. */
typedef struct {
  AirlockArch arch;
  char *cache_dir;                   /* absolute */
  char *arch_dir;                    /* <cache>/guest/<arch> */
  AirlockKernelPin *pin;             /* the Debian package; NULL for a custom kernel */
  char *custom_kernel;               /* absolute */
  char *custom_kernel_sha256;
  char *custom_modules_dir;          /* absolute */
  char *custom_release;              /* basename of custom_modules_dir */
  char *custom_modules_fingerprint;
  GPtrArray *requests;               /* AirlockModuleRequest, from modules.list */
  AirlockGuestProgram *programs;
  guint n_programs;
  char *kernel_key;   /* of the kernel stage: everything but the programs */
  char *key;          /* of the image: everything */
} AirlockGuestInputs;

void airlock_guest_inputs_free (AirlockGuestInputs *in);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockGuestInputs, airlock_guest_inputs_free)

/* A file the kernel stage contributes to the initramfs: a module (with its
 * name) or an index (modules.dep, load.list; no name). */
typedef struct {
  char *name;     /* module name, or NULL */
  char *path;     /* inside the initramfs, and inside the stage directory */
  guint64 size;
  char *sha256;   /* as stored (modules decompressed) */
} AirlockGuestFile;

void airlock_guest_file_free (AirlockGuestFile *file);

/* What a build produced.  The kernel stage fills everything but the
 * initramfs; the image build adds that. */
typedef struct {
  char *release;
  char *kernel_file;       /* "vmlinux", "bzImage" or "Image" */
  char *kernel_format;     /* "vmlinux-pvh", "bzimage", "arm64-image" */
  char *kernel_how;
  guint64 kernel_size;
  char *kernel_sha256;
  GPtrArray *files;             /* AirlockGuestFile: modules in load order, then the indexes */
  GPtrArray *builtin;           /* requested modules the kernel has built in */
  GPtrArray *absent_optional;   /* optional modules the kernel lacks */
  char *module_signatures;      /* "stripped" (a pinned package's) or "kept" (a custom
                                 * kernel's): stage_module () says why */
  char *depmod_version;
  char *initramfs_sha256;
  guint64 initramfs_size;
} AirlockGuestBuild;

void airlock_guest_build_free (AirlockGuestBuild *build);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockGuestBuild, airlock_guest_build_free)

/* "debian <package> <version> sha256:<…>" or "custom <path>". */
char *airlock_guest_inputs_describe_kernel (AirlockGuestInputs *in);

/* Writes manifest.json to @path.  Members come in a fixed order and nothing
 * depends on the time or the host (paths appear only for a custom kernel),
 * so equal inputs give an equal manifest. */
gboolean airlock_guest_manifest_write (AirlockGuestInputs *in, AirlockGuestBuild *build,
                                       const char *path, GError **error);

/* The image cached in @dir for @in, or NULL with the reason in @ret_why
 * (never an error: whatever is wrong, the answer is to build). */
AirlockGuestImage *airlock_guest_manifest_load (AirlockGuestInputs *in, const char *dir,
                                                char **ret_why);

/* The kernel stage: the boot kernel and the modules the initramfs needs,
 * extracted once per kernel and modules list, so that a new guest program
 * only costs a new initramfs.  kernel.json records it like manifest.json
 * records an image. */
gboolean airlock_guest_stage_write (AirlockGuestInputs *in, AirlockGuestBuild *build,
                                    const char *path, GError **error);
AirlockGuestBuild *airlock_guest_stage_load (AirlockGuestInputs *in, const char *dir,
                                             char **ret_why);

G_END_DECLS
