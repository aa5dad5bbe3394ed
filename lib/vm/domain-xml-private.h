/* Domain XML for one airlock guest.  Pure: builds text from a spec, so each
 * arch's XML is unit-tested without libvirt. */
#pragma once

#include "arch.h"

G_BEGIN_DECLS

#define AIRLOCK_METADATA_NS "https://airlock.invalid/xmlns/run/1"
#define AIRLOCK_DOMAIN_PREFIX "airlock-"

typedef struct {
  AirlockArch arch;
  const char *name;          /* AIRLOCK_DOMAIN_PREFIX + run id */
  const char *uuid;          /* canonical text form */
  const char *virt_type;     /* "kvm" or "qemu" (TCG) */
  const char *emulator;      /* path of qemu-system-*, or NULL: libvirt's choice */
  guint memory_mib;
  guint vcpus;
  const char *kernel;
  const char *initrd;
  const char *cmdline;       /* appended after the arch's console arguments */
  gboolean arm64_cpu_max;    /* arm64: -cpu max,pauth-impdef=on instead of cortex-a57 */
  gboolean icount;           /* TCG: -icount shift=2,sleep=off (the guest's clock counts
                              * its instructions and jumps over idle time: the warped
                              * clock); ignored under KVM */
  gboolean short_cpu_check;  /* amd64 TCG: libvirt reads the started guest CPU in two
                              * QMP calls instead of one per CPU property (~400);
                              * for a libvirt known to take <qemu:capabilities> */
  /* Recorded in <metadata> so a later run can tell whether the owner died. */
  const char *owner_boot_id;
  const char *owner_host;
  gint64 owner_pid;
  gint64 owner_start_time;   /* /proc/<pid>/stat starttime, against pid reuse */
  const char *run_dir;       /* host files of this run, removed with the domain */
  const char *socket_dir;    /* where QEMU binds channel sockets, or NULL: libvirt's
                              * choice (embedded roots are too deep for sun_path) */
  const char *root_disk;     /* raw/ext4 image attached read-only, or NULL */
  const char *root_disk_serial;
  gboolean stdio;            /* add the workload's stdio port */
  /* The one NIC: a QEMU stream netdev connected to the unix socket of
   * airlock's sinkhole process (sinkhole/), which writes the capture
   * and serves the network.  NULL: no NIC. */
  const char *net_socket;
  /* Instead of a NIC, the channel AIRLOCK_PORT_NET (a remote hypervisor:
   * airlock carries its stream to the sinkhole). */
  gboolean net_port;
} AirlockDomainSpec;

/* The guest's side of the user network (QEMU's defaults, spelled out). */
#include "net/guest-net.h"

/* Returns the domain XML (newly allocated).  Every value is escaped. */
char *airlock_domain_xml_build (const AirlockDomainSpec *spec);

/* The kernel command line tokens every domain of @arch gets after
 * console= (static): the ones that make it stop on a panic and boot fast
 * (cryptomgr.notests), and under TCG on arm64, kpti=0 (why: the
 * definition).  bench/'s bare-QEMU floor boots with the same. */
const char *airlock_domain_kernel_tokens (AirlockArch arch, gboolean kvm);

/* The kernel console device name for @arch ("ttyS0", "ttyAMA0"). */
const char *airlock_domain_console_device (AirlockArch arch);

G_END_DECLS
