/* What the decoder (event.c) shares with the event's presentation
 * (event-text.c). */
#pragma once

#include "event.h"

G_BEGIN_DECLS

/* Does the call send data (sendto, sendmsg, sendmmsg, send, write,
 * writev)?  Its payload may complete a DNS message, and a call without a
 * result still "sent" once it returned. */
gboolean airlock_event_is_send (const AirlockEvent *ev);

G_END_DECLS
