/* Cleanup functions for libvirt handles, defined once (STYLE.md). */
#pragma once

#include <glib.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

typedef virConnect AirlockVirConnect;
typedef virDomain AirlockVirDomain;
typedef virStream AirlockVirStream;

static inline void
airlock_vir_domain_free (virDomain *dom)
{
  if (dom)
    virDomainFree (dom);
}

static inline void
airlock_vir_connect_close (virConnect *conn)
{
  if (conn)
    virConnectClose (conn);
}

static inline void
airlock_vir_stream_free (virStream *st)
{
  if (st)
    virStreamFree (st);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockVirDomain, airlock_vir_domain_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockVirConnect, airlock_vir_connect_close)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockVirStream, airlock_vir_stream_free)

/* libvirt's last error message for this thread, never NULL. */
static inline const char *
airlock_vir_last_error (void)
{
  const char *msg = virGetLastErrorMessage ();
  return msg ? msg : "unknown libvirt error";
}
