/* What a guest image is made from, gathered and keyed: the kernel (a
 * pinned Debian package or the caller's own, with its modules), the
 * modules list, the guest programs, and the cache keys over all of them
 * (inputs.c; the types are in manifest-private.h, which records them). */
#pragma once

#include "guestimg/manifest-private.h"

G_BEGIN_DECLS

/* The inputs for @arch under @options (the cache root made absolute, the
 * recipe's files read, the programs hashed) with their keys; NULL with
 * @error set. */
AirlockGuestInputs *airlock_guest_inputs_load (AirlockArch arch,
                                               const AirlockGuestImageOptions *options,
                                               GError **error);

/* FALSE with @error saying how to point airlock at its data files when
 * @path (a file of airlock_data_dir(), @what: "testroot recipe", …) is not
 * there. */
gboolean airlock_guest_check_data_file (const char *path, const char *what, GError **error);

/* Whether @release can be a kernel release: it names a directory and goes
 * into keys and paths. */
gboolean airlock_guest_release_is_valid (const char *release);

G_END_DECLS
