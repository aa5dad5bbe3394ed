/* Opening a libvirt connection, and finding what crashed runs left behind. */
#pragma once

#include "fsutil-private.h"
#include "vm/libvirt-private.h"

G_BEGIN_DECLS

typedef struct {
  virConnectPtr conn;
  char *uri;
  char *cache_dir;
  gboolean embedded;
  /* The hypervisor is another host's (not the embedded driver, not a
   * qemu:/// daemon): its QEMU reaches nothing of ours but what libvirt
   * carries, so the network goes on a channel and the guest's files go up
   * as storage volumes (remote-volumes.c). */
  gboolean remote;
  int slot_lock_fd;      /* embedded: flock held on our slot for the connection's life */
  char *embed_root;      /* embedded: the slot directory */
  int refs;
} AirlockConnection;

/* Identity of this process, recorded in each domain's metadata. */
typedef struct {
  char *boot_id;
  char *host;
  gint64 pid;
  gint64 start_time;
} AirlockOwner;

/* Opens @uri (NULL: $AIRLOCK_CONNECT, else the embedded driver in a free slot
 * under @cache_dir/libvirt), then removes leftover airlock domains whose
 * owner is dead, appending their names to @swept.  Returns NULL with
 * AIRLOCK_VM_ERROR_CONNECT naming the URI and libvirt's reason. */
AirlockConnection *airlock_connection_open (const char *uri, const char *cache_dir,
                                            GPtrArray *swept, GError **error);
/* Embedded driver only: kills the local QEMU of domain @name at once (libvirt's
 * destroy sends SIGTERM and waits; QEMU under TCG takes over a second to obey)
 * — identified by libvirt's pid file and checked against its command line.
 * Returns TRUE if a process was killed. */
gboolean airlock_connection_kill_qemu (AirlockConnection *c, const char *name);
/* Embedded driver only: the pid of domain @name's QEMU, found and checked
 * as above, or 0; *@ret_is_child says whether it is our child — libvirt
 * daemonizes QEMU, so it is when this process is a child subreaper
 * (airlock_vm_adopt_qemu()). */
pid_t airlock_connection_qemu_pid (AirlockConnection *c, const char *name,
                                   gboolean *ret_is_child);
/* Takes our child QEMU @pid out of the reaper thread's hands: the caller
 * reaps it with airlock_connection_reap_qemu(). */
void airlock_connection_claim_qemu (pid_t pid);
/* Kills claimed QEMU @pid unless it has exited already, reaps it (waiting
 * at most 5 s) and drops the claim.  Returns TRUE if it was killed here. */
gboolean airlock_connection_reap_qemu (pid_t pid);
/* Once a process is a child subreaper: starts the thread that reaps the
 * unclaimed daemonized QEMUs that come to it (every 50 ms). */
void airlock_connection_start_reaper (void);

/* Drops a reference.  The embedded connection of a cache directory is opened
 * once per process and kept (libvirt registers its QEMU driver again on
 * every embedded open, and a process can only register so many). */
void airlock_connection_free (AirlockConnection *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockConnection, airlock_connection_free)

const AirlockOwner *airlock_owner_self (void);

/* TRUE if the owner described by these metadata values is a live process. */
gboolean airlock_owner_is_alive (const char *boot_id, const char *host, gint64 pid,
                                 gint64 start_time);

/* A private directory for short-lived sockets, short enough for sun_path:
 * $XDG_RUNTIME_DIR/airlock, /run/airlock for root, else /tmp/airlock-UID
 * (created 0700 and checked to be ours, not a link).  NULL with @error set. */
char *airlock_runtime_dir (GError **error);


G_END_DECLS
