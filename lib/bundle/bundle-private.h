/* The bundle writer below airlock_bundle_finish(): what it takes from the
 * VM's run, as plain values, so a bundle can be written from a channel
 * and events made without booting (tests/unit/test-bundle.c). */
#pragma once

#include "bundle/bundle.h"
#include "evidence/channel.h"

G_BEGIN_DECLS

/* The run as the bundle records it; borrowed for the call. */
typedef struct {
  AirlockChannel *channel;      /* closed: its frames, raw bytes, chain head, trailer */
  AirlockEventLog *events;      /* or NULL */
  GBytes *pcap;                 /* or NULL: no NIC, or the capture could not be read */
  const char *pcap_error;       /* why there is no pcap, or NULL */
  const char *accel, *uri, *domain_name;
  const char *reason;           /* why the channel did not complete, or NULL */
  const char *qemu_version, *libvirt_version;
  guint heartbeat_ms, heartbeat_tolerance_ms;
  gboolean complete;
  gboolean output_truncated;    /* the VM's copy of stdout was cut */
} AirlockBundleRun;

/* airlock_bundle_finish() with the run given instead of read from
 * @input->vm (which is not used). */
gboolean airlock_bundle_finish_run (AirlockBundle *bundle, const AirlockBundleInput *input,
                                    const AirlockBundleRun *run, GError **error);

G_END_DECLS
