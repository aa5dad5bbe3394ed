/* Kernel modules for the initramfs: the requested list (modules.list), the
 * kernel's dependency table (modules.dep as depmod writes it) and the closure
 * of one over the other, in load order. */
#pragma once

#include "airlock-macros.h"

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  char *name;          /* normalised: '-' spelled '_' */
  gboolean optional;   /* "name?" in modules.list: skipped when the kernel lacks it */
} AirlockModuleRequest;

void airlock_module_request_free (AirlockModuleRequest *request);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockModuleRequest, airlock_module_request_free)

/* Parses modules.list: one module name per line, '#' starts a comment, a
 * trailing '?' marks a module as optional.  @origin names the file in
 * messages.  Returns an array of AirlockModuleRequest (in file order, owning
 * them), or NULL with AIRLOCK_GUEST_IMAGE_ERROR_RECIPE naming @origin and the
 * line. */
GPtrArray *airlock_modules_list_parse (const char *text, const char *origin, GError **error);

/* @ko without the signature the kernel's build appended to it
 * (scripts/sign-file: the PKCS#7 data, struct module_signature, then
 * "~Module signature appended~\n"), or a new reference to @ko when it has
 * none.  NULL with AIRLOCK_GUEST_IMAGE_ERROR_MODULES naming @what when the
 * trailer claims more bytes than the file holds. */
GBytes *airlock_module_strip_signature (GBytes *ko, const char *what, GError **error);

/* "kernel/drivers/char/hw_random/virtio-rng.ko.xz" → "virtio_rng": the name
 * the kernel and modprobe use.  Returns NULL when @path is not a module. */
char *airlock_module_name_from_path (const char *path);

typedef struct _AirlockModuleDep AirlockModuleDep;

/* Parses the modules.dep section of `depmod -n` output (or a modules.dep
 * file): lines "path: dep dep…", paths relative to lib/modules/<release>.
 * Parsing stops at the first '#' line, where depmod -n starts the next file.
 * Returns NULL with AIRLOCK_GUEST_IMAGE_ERROR_MODULES naming @origin and the
 * line for a malformed line or an unsafe path (absolute, with "..").  */
AirlockModuleDep *airlock_module_dep_parse (const char *text, const char *origin, GError **error);
void airlock_module_dep_free (AirlockModuleDep *dep);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockModuleDep, airlock_module_dep_free)

/* Names of the modules in a modules.builtin text (one path per line). */
GHashTable *airlock_modules_builtin_parse (const char *text);

typedef struct {
  GPtrArray *load_order;        /* module paths, dependencies first (owned strings) */
  GPtrArray *builtin;           /* requested names built into the kernel */
  GPtrArray *absent_optional;   /* optional names the kernel has neither way */
} AirlockModuleClosure;

void airlock_module_closure_free (AirlockModuleClosure *closure);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockModuleClosure, airlock_module_closure_free)

/* Resolves @requests (AirlockModuleRequest) against @dep and @builtin (a set
 * of names; NULL for none).  Each request's dependencies come before it, in
 * the order modprobe would load them (modules.dep lists them last-loaded
 * first), and a module appears once, where it is first needed: the order
 * depends only on the inputs.  @release names the kernel in messages.
 * Returns NULL with AIRLOCK_GUEST_IMAGE_ERROR_MODULES when a required module
 * is missing, when modules.dep names a dependency that has no entry of its
 * own, or when dependencies form a cycle (the message spells the cycle). */
AirlockModuleClosure *airlock_modules_closure (AirlockModuleDep *dep, GHashTable *builtin,
                                               GPtrArray *requests, const char *release,
                                               GError **error);

/* The modules.dep text for @paths only (each must be in @dep, and their
 * dependencies among @paths), lines in the order of @paths, with each path
 * passed through @rename (NULL: unchanged) — the initramfs stores
 * decompressed modules under their ".ko" name. */
char *airlock_module_dep_format (AirlockModuleDep *dep, GPtrArray *paths,
                                 char *(*rename) (const char *path));

G_END_DECLS
