// Per-stack counters with the names `nstat` prints (the Tcp* MIB and TcpExt*).
// One X-macro list so names, storage and printing never drift apart.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace weir {

#define WEIR_COUNTERS(X)                                                        \
  X(TcpActiveOpens) X(TcpPassiveOpens) X(TcpAttemptFails) X(TcpEstabResets)  \
  X(TcpCurrEstab) X(TcpInSegs) X(TcpOutSegs) X(TcpRetransSegs) X(TcpInErrs)   \
  X(TcpOutRsts) X(TcpInCsumErrors)                                            \
  X(TcpExtSyncookiesSent) X(TcpExtSyncookiesRecv) X(TcpExtSyncookiesFailed)   \
  X(TcpExtEmbryonicRsts) X(TcpExtPAWSActive) X(TcpExtPAWSEstab)               \
  X(TcpExtTW) X(TcpExtTWRecycled) X(TcpExtTWKilled) X(TcpExtDelayedACKs) X(TcpExtDelayedACKLocked) \
  X(TcpExtDelayedACKLost) X(TcpExtListenOverflows) X(TcpExtListenDrops)       \
  X(TcpExtTCPHPHits) X(TcpExtTCPPureAcks) X(TcpExtTCPHPAcks)                  \
  X(TcpExtTCPRenoRecovery) X(TcpExtTCPSackRecovery) X(TcpExtTCPSACKReneging)  \
  X(TcpExtTCPSACKReorder) X(TcpExtTCPRenoReorder) X(TcpExtTCPTSReorder)       \
  X(TcpExtTCPFullUndo) X(TcpExtTCPPartialUndo) X(TcpExtTCPDSACKUndo)          \
  X(TcpExtTCPLossUndo) X(TcpExtTCPLostRetransmit) X(TcpExtTCPRenoFailures)    \
  X(TcpExtTCPSackFailures) X(TcpExtTCPLossFailures) X(TcpExtTCPFastRetrans)   \
  X(TcpExtTCPSlowStartRetrans) X(TcpExtTCPTimeouts) X(TcpExtTCPLossProbes)    \
  X(TcpExtTCPLossProbeRecovery) X(TcpExtTCPRenoRecoveryFail)                  \
  X(TcpExtTCPSackRecoveryFail) X(TcpExtTCPRcvCollapsed) X(TcpExtTCPDSACKOldSent) \
  X(TcpExtTCPDSACKOfoSent) X(TcpExtTCPDSACKRecv) X(TcpExtTCPDSACKOfoRecv)     \
  X(TcpExtTCPAbortOnData) X(TcpExtTCPAbortOnClose) X(TcpExtTCPAbortOnMemory)  \
  X(TcpExtTCPAbortOnTimeout) X(TcpExtTCPAbortOnLinger) X(TcpExtTCPAbortFailed) \
  X(TcpExtTCPMemoryPressures) X(TcpExtTCPSACKDiscard) X(TcpExtTCPDSACKIgnoredOld) \
  X(TcpExtTCPDSACKIgnoredNoUndo) X(TcpExtTCPSpuriousRTOs) X(TcpExtTCPSackShifted) \
  X(TcpExtTCPSackMerged) X(TcpExtTCPSackShiftFallback) X(TcpExtTCPBacklogDrop) \
  X(TcpExtPFMemallocDrop) X(TcpExtTCPMinTTLDrop) X(TcpExtTCPDeferAcceptDrop)  \
  X(TcpExtTCPTimeWaitOverflow) X(TcpExtTCPReqQFullDoCookies) X(TcpExtTCPReqQFullDrop) \
  X(TcpExtTCPRetransFail) X(TcpExtTCPRcvCoalesce) X(TcpExtTCPOFOQueue)        \
  X(TcpExtTCPOFODrop) X(TcpExtTCPOFOMerge) X(TcpExtTCPChallengeACK)           \
  X(TcpExtPruneCalled) X(TcpExtRcvPruned) X(TcpExtOfoPruned)                 \
  X(TcpExtTCPSYNChallenge) X(TcpExtTCPSpuriousRtxHostQueues) X(TcpExtTCPAutoCorking) \
  X(TcpExtTCPFromZeroWindowAdv) X(TcpExtTCPToZeroWindowAdv) X(TcpExtTCPWantZeroWindowAdv) \
  X(TcpExtTCPSynRetrans) X(TcpExtTCPOrigDataSent) X(TcpExtTCPHystartTrainDetect) \
  X(TcpExtTCPHystartTrainCwnd) X(TcpExtTCPHystartDelayDetect) X(TcpExtTCPHystartDelayCwnd) \
  X(TcpExtTCPACKSkippedSynRecv) X(TcpExtTCPACKSkippedPAWS) X(TcpExtTCPACKSkippedSeq) \
  X(TcpExtTCPACKSkippedFinWait2) X(TcpExtTCPACKSkippedTimeWait) X(TcpExtTCPACKSkippedChallenge) \
  X(TcpExtTCPWinProbe) X(TcpExtTCPKeepAlive) X(TcpExtTCPMTUPFail) X(TcpExtTCPMTUPSuccess) \
  X(TcpExtTCPDelivered) X(TcpExtTCPDeliveredCE) X(TcpExtTCPAckCompressed)     \
  X(TcpExtTCPZeroWindowDrop) X(TcpExtTCPRcvQDrop) X(TcpExtTCPWqueueTooBig)     \
  X(TcpExtTCPFastOpenPassive) X(TcpExtTCPFastOpenPassiveFail)                 \
  X(TcpExtTCPFastOpenPassiveAltKey) X(TcpExtTCPFastOpenListenOverflow)         \
  X(TcpExtTCPFastOpenCookieReqd) X(TcpExtTCPFastOpenActive)                    \
  X(TcpExtTCPFastOpenActiveFail) X(TcpExtTCPFastOpenBlackhole)                 \
  X(TcpExtTCPTimeoutRehash) X(TcpExtTCPDuplicateDataRehash)                    \
  X(TcpExtTCPDSACKRecvSegs) X(TcpExtTCPDSACKIgnoredDubious) \
  X(TcpExtTCPMigrateReqSuccess) X(TcpExtTCPPLBRehash) X(TcpExtTCPAOBad)      \
  X(TcpExtTCPMD5NotFound) X(TcpExtTCPMD5Unexpected) X(TcpExtTCPMD5Failure)   \
  X(IpInReceives) X(IpInHdrErrors) X(IpInAddrErrors) X(IpInUnknownProtos)     \
  X(IpInDiscards) X(IpInDelivers) X(IpOutRequests) X(IcmpInMsgs) X(IcmpInErrors) \
  X(IcmpInDestUnreachs) X(Icmp6InPktTooBigs) X(TcpExtOutOfWindowIcmps)       \
  X(WeirPmtuCacheEvictions) X(WeirOutDeviceDrops) X(WeirErrQueueDrops)       \
  X(IpExtInNoECTPkts) X(IpExtInECT1Pkts) X(IpExtInECT0Pkts) X(IpExtInCEPkts)  \
  X(Ip6InNoECTPkts) X(Ip6InECT1Pkts) X(Ip6InECT0Pkts) X(Ip6InCEPkts)

enum class Counter : uint16_t {
#define WEIR_COUNTER_ENUM(n) n,
  WEIR_COUNTERS(WEIR_COUNTER_ENUM)
#undef WEIR_COUNTER_ENUM
  kCount
};

std::string_view counter_name(Counter c);

struct Counters {
  std::array<uint64_t, static_cast<size_t>(Counter::kCount)> v{};
  void inc(Counter c, uint64_t n = 1) { v[static_cast<size_t>(c)] += n; }
  void dec(Counter c, uint64_t n = 1) { v[static_cast<size_t>(c)] -= n; }
  uint64_t get(Counter c) const { return v[static_cast<size_t>(c)]; }
  uint64_t& operator[](Counter c) { return v[static_cast<size_t>(c)]; }
};

}  // namespace weir
