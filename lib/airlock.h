/* libairlock: prove whether a container image reaches for the network.
 * The umbrella header: <airlock.h> in the tree; installed as
 * airlock-1/airlock/airlock.h, which airlock-1/airlock.h (lib/include/) includes.
 * Its includes are relative to this file, so they find the headers beside it
 * in either layout (lib/meson.build). */
#pragma once

#define AIRLOCK_INSIDE

#include "airlock-version.h"
#include "airlock-macros.h"
#include "arch.h"
#include "paths.h"
#include "json.h"
#include "evidence/channel.h"
#include "evidence/spec.h"
#include "guestimg/guest-image.h"
#include "image/image.h"
#include "policy/policy.h"
#include "vm/vm.h"
#include "case/case.h"
#include "testing/testing.h"
/* What a run records and how it is judged and kept: the events the
 * supervisor sends (in the evidence protocol's terms, protocol.h), the
 * capture's flows, the sinkhole's records, the run record, the verdict over
 * it, and the bundle that holds them (write, verify, read, print).  The
 * airlock command uses the library through these alone. */
#include "protocol.h"
#include "evidence/abi-names.h"
#include "evidence/sockaddr.h"
#include "evidence/dns.h"
#include "evidence/event.h"
#include "net/flows.h"
#include "sinkhole/sinkhole.h"
#include "record/run-record.h"
#include "gate/verdict.h"
#include "bundle/bundle.h"
#include "bundle/bundle-network.h"
#include "bundle/bundle-read.h"
#include "bundle/policy-suggest.h"

#undef AIRLOCK_INSIDE
