/* What the capture holds against the guest (see capture-private.h):
 * each kind once, with a count and the first frame's number, offset and
 * reason. */
#include "config.h"

#include "capture-private.h"

const char *
airlock_capture_anomaly_kind_to_string (AirlockCaptureAnomalyKind kind)
{
  switch (kind)
    {
    case AIRLOCK_CAPTURE_ANOMALY_CLIPPED: return "clipped";
    case AIRLOCK_CAPTURE_ANOMALY_ETHERNET: return "ethernet";
    case AIRLOCK_CAPTURE_ANOMALY_VLAN: return "vlan";
    case AIRLOCK_CAPTURE_ANOMALY_NON_IP: return "non-ip";
    case AIRLOCK_CAPTURE_ANOMALY_ARP: return "arp";
    case AIRLOCK_CAPTURE_ANOMALY_IPV4: return "ipv4";
    case AIRLOCK_CAPTURE_ANOMALY_IPV6: return "ipv6";
    case AIRLOCK_CAPTURE_ANOMALY_TCP: return "tcp";
    case AIRLOCK_CAPTURE_ANOMALY_UDP: return "udp";
    case AIRLOCK_CAPTURE_ANOMALY_ICMP: return "icmp";
    case AIRLOCK_CAPTURE_ANOMALY_ICMPV6: return "icmpv6";
    case AIRLOCK_CAPTURE_ANOMALY_FRAGMENT: return "fragment";
    case AIRLOCK_CAPTURE_ANOMALY_FOREIGN_MAC: return "foreign-mac";
    case AIRLOCK_CAPTURE_ANOMALY_IGMP: return "igmp";
    case AIRLOCK_CAPTURE_ANOMALY_FOREIGN_SOURCE: return "foreign-source";
    case AIRLOCK_CAPTURE_ANOMALY_NEIGHBOUR: return "neighbour";
    case AIRLOCK_CAPTURE_ANOMALY_MULTICAST: return "multicast";
    case AIRLOCK_CAPTURE_ANOMALY_VLAN_TAG: return "vlan-tag";
    case AIRLOCK_CAPTURE_ANOMALY_LIMIT: return "limit";
    case AIRLOCK_CAPTURE_ANOMALY_N_KINDS:
    default: return "invalid";
    }
}

void
net_capture_note_anomaly (AirlockCapture *capture, AirlockCaptureAnomalyKind kind,
                          const char *reason)
{
  AirlockCaptureAnomaly *anomaly = &capture->anomalies[kind];

  if (anomaly->count == 0)
    {
      anomaly->kind = kind;
      anomaly->first_record = capture->record->index;
      anomaly->first_frame = capture->record->index + 1;
      anomaly->first_reason = g_strdup_printf ("frame %" G_GUINT64_FORMAT " at offset %"
                                               G_GSIZE_FORMAT " (%s): %s",
                                               anomaly->first_frame, capture->record->offset,
                                               capture->from_guest ? "from the guest" : "from QEMU",
                                               reason);
    }
  anomaly->count++;
  if (capture->from_guest)
    anomaly->from_guest++;
}

GPtrArray *
airlock_capture_get_anomalies (AirlockCapture *capture)
{
  g_return_val_if_fail (capture != NULL, NULL);
  return capture->anomaly_list;
}

const AirlockCaptureAnomaly *
airlock_capture_get_first_anomaly (AirlockCapture *capture)
{
  const AirlockCaptureAnomaly *first = NULL;

  g_return_val_if_fail (capture != NULL, NULL);
  for (guint i = 0; i < capture->anomaly_list->len; i++)
    {
      const AirlockCaptureAnomaly *a = capture->anomaly_list->pdata[i];

      if (first == NULL || a->first_record < first->first_record)
        first = a;
    }
  return first;
}
