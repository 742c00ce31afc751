// ccsim's dumbbell in ns-3, for the side-by-side validation (bench/compare.py); with
// `hop` lines, ccsim's parking lot instead (RunParkingLot, below).
//
// Topology, as ccsim builds it (crates/ccsim-core/src/sim.rs): one sender and one
// receiver per flow, each on its own point-to-point access link (rate `access_rate_bps`);
// the sender's access link carries the flow's base RTT (one way: rtt/2 - bottleneck
// delay, both directions); the receiver's access link has no delay; one bottleneck link
// left-router -> right-router whose forward device holds the queue discipline under test
// over a one-packet device queue, and whose reverse direction (ACKs) runs at
// `reverse_rate_bps` with an ample FIFO.
//
// Input: a configuration file of "key value..." lines written by bench/compare.py (see
// `Config` below). Output: a JSON file of raw counts (per-flow application bytes at the
// start and end of the measurement window, bottleneck queue-disc counters at both ends,
// run statistics and what ns-3 actually configured) and a binary file of int64
// nanosecond sojourn times (queue-disc enqueue to start of transmission on the wire) of
// every packet that started transmission inside the window. The metrics are computed
// from these by the same Python code as ccsim's.
//
// Investigation aids (stderr): DUMBBELL_DEBUG=1 prints every recovery and RTO with the
// sender's RTO and smoothed RTT, and every retransmitted segment (its number); DUMBBELL_CWND=i prints flow i's congestion window;
// DUMBBELL_SOJOURN=1 prints every bottleneck packet's sojourn time.
// DUMBBELL_MARKS=1 prints every ECN mark of the bottleneck queue disc (time, sojourn, backlog).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdio>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

struct FlowCfg
{
    std::string cc;    // ns-3 TypeId name of the congestion control
    int64_t rttNs;     // base two-way propagation delay
    bool ecn;          // negotiate ECN (DCTCP always does)
    int64_t startNs;   // application start (the SYN)
    // A parking lot's flow (`flow_hops FROM TO` after its `flow` line): its sender hangs
    // off router FROM, its receiver off router TO (routers r0..rN, hop i joins r(i-1) to
    // r(i)); -1 in a dumbbell.
    int fromRouter = -1;
    int toRouter = -1;
};

// A parking lot's hop (`hop RATE_BPS DELAY_NS QDISC`, then its `hattr NAME VALUE`
// lines): a link from r(i-1) to r(i) whose forward device holds the queue disc over a
// one-packet device queue, and whose reverse direction (ACKs) has the same rate and delay
// and an ample FIFO (ccsim's `hop<i>` and `hop<i>-reverse`).
struct HopCfg
{
    uint64_t rateBps = 0;
    int64_t delayNs = 0;
    std::string qdisc;
    std::vector<std::pair<std::string, std::string>> attrs;
};

// A Poisson UDP background source (exponential gaps between packets of `wireBytes`).
struct UdpCfg
{
    int64_t rttNs;
    uint64_t rateBps;
    uint32_t wireBytes; // IP packet size (UDP payload + 28)
    int64_t startNs;
};

struct RunConfig
{
    uint32_t seed = 1;
    int64_t durationNs = 0;
    int64_t measureStartNs = 0;
    int64_t measureEndNs = 0;
    uint64_t rateBps = 0;
    uint64_t reverseRateBps = 0;
    uint64_t accessRateBps = 0;
    int64_t bottleneckDelayNs = 0;
    uint32_t wirePacketBytes = 1500; // IP packet size the link rates are scaled for
    uint32_t pppHeaderBytes = 2;     // point-to-point header ns-3 adds to every packet
    uint32_t mss = 1448;
    uint32_t initialWindow = 10;
    bool delayedAck = true;
    int64_t delAckTimeoutNs = 40000000;
    int64_t minRtoNs = 200000000;
    int64_t connTimeoutNs = 1000000000;
    uint64_t bufBytes = 1 << 22;
    uint32_t ampleQueuePackets = 100000;
    std::string qdisc;                                    // TypeId name
    std::vector<std::pair<std::string, std::string>> qattrs; // its attributes
    // Attribute defaults (Config::SetDefault), e.g. for the CoDel queues FQ-CoDel creates.
    std::vector<std::pair<std::string, std::string>> defaults;
    // Optional token-bucket shaper in front of it (ns-3 TbfQueueDisc as the root, the
    // queue disc above as its one child); 0 = none.
    int prr64 = 0; // 1: TcpPrrRecovery64; 2: also Linux's DeliveredData (see there)
    int recoveryExitLinux = 0; // 1: Linux's cwnd growth on the ACK ending a reduction
    int renoCntLinux = 0; // 1: TcpLinuxRenoCnt, Reno's growth counter cleared as Linux does
    int ceQuickAckLinux = 0; // 1: receivers ACK a first CE segment and the next at once
    bool rtoLinux = false; // RttLinux: Linux's RTO (see there)
    int devicePull = 0; // 1: the device takes a packet only when the wire frees (see there)
    uint32_t fqTotalMinBytes = 0; // >0: FQ-CoDel tests the qdisc's backlog (see there)
    int pieAccuLinux = 0; // 1: PIE clears its accumulated probability on a coin-toss mark
    int eceLatchLinux = 0; // 1: receivers echo ECE exactly while Linux's latch is set
    uint64_t shaperRateBps = 0;
    uint32_t shaperBurstBytes = 0;
    std::vector<FlowCfg> flows;
    std::vector<UdpCfg> udps;
    std::vector<HopCfg> hops; // a parking lot; empty: the dumbbell
    std::string outJson;
    std::string outSojourn;
};

RunConfig
ReadConfig(const std::string& path)
{
    RunConfig c;
    std::ifstream in(path);
    NS_ABORT_MSG_IF(!in, "cannot read config " << path);
    std::string line;
    while (std::getline(in, line))
    {
        if (line.empty() || line[0] == '#')
        {
            continue;
        }
        std::istringstream s(line);
        std::string k;
        s >> k;
        if (k == "seed")
            s >> c.seed;
        else if (k == "duration_ns")
            s >> c.durationNs;
        else if (k == "measure_start_ns")
            s >> c.measureStartNs;
        else if (k == "measure_end_ns")
            s >> c.measureEndNs;
        else if (k == "rate_bps")
            s >> c.rateBps;
        else if (k == "reverse_rate_bps")
            s >> c.reverseRateBps;
        else if (k == "access_rate_bps")
            s >> c.accessRateBps;
        else if (k == "bottleneck_delay_ns")
            s >> c.bottleneckDelayNs;
        else if (k == "wire_packet_bytes")
            s >> c.wirePacketBytes;
        else if (k == "ppp_header_bytes")
            s >> c.pppHeaderBytes;
        else if (k == "mss")
            s >> c.mss;
        else if (k == "initial_window")
            s >> c.initialWindow;
        else if (k == "delayed_ack")
            s >> c.delayedAck;
        else if (k == "delack_timeout_ns")
            s >> c.delAckTimeoutNs;
        else if (k == "min_rto_ns")
            s >> c.minRtoNs;
        else if (k == "conn_timeout_ns")
            s >> c.connTimeoutNs;
        else if (k == "buf_bytes")
            s >> c.bufBytes;
        else if (k == "ample_queue_packets")
            s >> c.ampleQueuePackets;
        else if (k == "qdisc")
            s >> c.qdisc;
        else if (k == "prr64")
            s >> c.prr64;
        else if (k == "rto_linux")
            s >> c.rtoLinux;
        else if (k == "recovery_exit_linux")
            s >> c.recoveryExitLinux;
        else if (k == "reno_cnt_linux")
            s >> c.renoCntLinux;
        else if (k == "ce_quickack_linux")
            s >> c.ceQuickAckLinux;
        else if (k == "device_pull")
            s >> c.devicePull;
        else if (k == "fqcodel_total_min_bytes")
            s >> c.fqTotalMinBytes;
        else if (k == "pie_accu_linux")
            s >> c.pieAccuLinux;
        else if (k == "ece_latch_linux")
            s >> c.eceLatchLinux;
        else if (k == "shaper_rate_bps")
            s >> c.shaperRateBps;
        else if (k == "shaper_burst_bytes")
            s >> c.shaperBurstBytes;
        else if (k == "qattr")
        {
            std::string n;
            std::string v;
            s >> n >> v;
            c.qattrs.emplace_back(n, v);
        }
        else if (k == "default")
        {
            std::string n;
            std::string v;
            s >> n >> v;
            c.defaults.emplace_back(n, v);
        }
        else if (k == "flow")
        {
            FlowCfg f;
            int ecn = 0;
            s >> f.cc >> f.rttNs >> ecn >> f.startNs;
            f.ecn = ecn != 0;
            c.flows.push_back(f);
        }
        else if (k == "flow_hops")
        {
            NS_ABORT_MSG_IF(c.flows.empty(), "flow_hops before any flow");
            s >> c.flows.back().fromRouter >> c.flows.back().toRouter;
        }
        else if (k == "hop")
        {
            HopCfg h;
            s >> h.rateBps >> h.delayNs >> h.qdisc;
            c.hops.push_back(h);
        }
        else if (k == "hattr")
        {
            NS_ABORT_MSG_IF(c.hops.empty(), "hattr before any hop");
            std::string n;
            std::string v;
            s >> n >> v;
            c.hops.back().attrs.emplace_back(n, v);
        }
        else if (k == "udp")
        {
            UdpCfg u;
            s >> u.rttNs >> u.rateBps >> u.wireBytes >> u.startNs;
            c.udps.push_back(u);
        }
        else if (k == "out_json")
            s >> c.outJson;
        else if (k == "out_sojourn")
            s >> c.outSojourn;
        else
            NS_ABORT_MSG("unknown config key " << k);
        NS_ABORT_MSG_IF(s.fail(), "bad config line: " << line);
    }
    return c;
}

// A bulk sender: keeps the socket's send buffer full for the whole run.
class BulkSender : public Application
{
  public:
    void Setup(Address peer, bool ecn)
    {
        m_peer = peer;
        m_ecn = ecn;
    }

    Ptr<TcpSocketBase> GetSocket() const
    {
        return m_socket;
    }

  private:
    void StartApplication() override
    {
        Ptr<Socket> s = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
        m_socket = DynamicCast<TcpSocketBase>(s);
        NS_ABORT_MSG_IF(!m_socket, "not a TcpSocketBase");
        // ECN is a per-socket choice here; DCTCP turns it on in its Init() anyway.
        m_socket->SetAttribute("UseEcn", EnumValue(m_ecn ? TcpSocketState::On : TcpSocketState::Off));
        for (auto& cb : m_onSocket)
        {
            cb(m_socket);
        }
        m_socket->Bind();
        m_socket->Connect(m_peer);
        m_socket->SetConnectCallback(MakeCallback(&BulkSender::Connected, this),
                                     MakeNullCallback<void, Ptr<Socket>>());
        m_socket->SetSendCallback(MakeCallback(&BulkSender::Fill, this));
    }

    void StopApplication() override
    {
    }

    void Connected(Ptr<Socket> s)
    {
        Fill(s, s->GetTxAvailable());
    }

    void Fill(Ptr<Socket> s, uint32_t)
    {
        const uint32_t chunk = 64 * 1448;
        while (s->GetTxAvailable() > 0)
        {
            uint32_t n = std::min(chunk, s->GetTxAvailable());
            if (s->Send(Create<Packet>(n)) < 0)
            {
                break;
            }
        }
    }

  public:
    std::vector<std::function<void(Ptr<TcpSocketBase>)>> m_onSocket;

  private:
    Address m_peer;
    bool m_ecn = false;
    Ptr<TcpSocketBase> m_socket;
};

// With `prr64 2` also Linux's DeliveredData: ns-3 adds one segment per duplicate ACK on top
// of `deliveredBytes`, which with SACK already counts the newly SACKed bytes, so its PRR
// lets twice the data out during a reduction; Linux `tcp_cwnd_reduction` counts
// `newly_acked_sacked` only (a duplicate ACK counts one segment only without SACK,
// `tcp_add_reno_sack`). Set by `g_prrLinuxDelivered` (cause `ns3-prr-dupack`).
bool g_prrLinuxDelivered = false;

// Linux's cwnd growth on the ACK that ends a reduction (cause `ns3-recovery-exit`).
// ns-3's `TcpSocketBase::ProcessAck` ends fast recovery by setting cwnd = ssthresh, calling
// the recovery's `ExitRecovery` and then `IncreaseWindow(tcb, segsAcked)` with
// `segsAcked = (ackNumber - oldHeadSequence) / segmentSize`: every segment the ACK covers,
// those SACKed earlier included. Linux (`tcp_cong_control` -> `tcp_cong_avoid(sk, ack,
// acked_sacked)`) grows cwnd by the packets this ACK newly delivered. With
// `recovery_exit_linux 1`, `ExitRecovery` notes the socket and the time, and the
// congestion controls below (subclasses of ns-3's) pass the ACK's newly delivered
// segments (`m_lastAckedSackedBytes`, which `TcpSocketBase::ReceivedAck` sets from the
// rate sampler's delivered count) to `IncreaseWindow` when it is called for the same ACK.
bool g_recoveryExitLinux = false;
std::map<const TcpSocketState*, int64_t> g_reductionEnd; // socket -> time (ns) it ended

void
NoteReductionEnd(Ptr<TcpSocketState> tcb)
{
    if (g_recoveryExitLinux)
    {
        g_reductionEnd[PeekPointer(tcb)] = Simulator::Now().GetNanoSeconds();
    }
}

uint32_t
SegmentsToGrowBy(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked)
{
    auto it = g_reductionEnd.find(PeekPointer(tcb));
    if (it == g_reductionEnd.end())
    {
        return segmentsAcked;
    }
    bool sameAck = it->second == Simulator::Now().GetNanoSeconds();
    g_reductionEnd.erase(it);
    return sameAck ? tcb->m_lastAckedSackedBytes / tcb->m_segmentSize : segmentsAcked;
}

#define LINUX_RECOVERY_EXIT(Name, Base)                                                    \
    class Name : public Base                                                               \
    {                                                                                      \
      public:                                                                              \
        static TypeId GetTypeId()                                                          \
        {                                                                                  \
            static TypeId tid = TypeId("ns3::" #Name)                                      \
                                    .SetParent<Base>()                                     \
                                    .AddConstructor<Name>()                                \
                                    .SetGroupName("Internet");                             \
            return tid;                                                                    \
        }                                                                                  \
        void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override      \
        {                                                                                  \
            Base::IncreaseWindow(tcb, SegmentsToGrowBy(tcb, segmentsAcked));               \
        }                                                                                  \
        Ptr<TcpCongestionOps> Fork() override                                              \
        {                                                                                  \
            return CopyObject<Name>(this);                                                 \
        }                                                                                  \
    };                                                                                     \
    NS_OBJECT_ENSURE_REGISTERED(Name)

LINUX_RECOVERY_EXIT(TcpLinuxRenoLinuxExit, TcpLinuxReno);
LINUX_RECOVERY_EXIT(TcpCubicLinuxExit, TcpCubic);
LINUX_RECOVERY_EXIT(TcpDctcpLinuxExit, TcpDctcp);

// ns-3 3.44's TcpLinuxReno with its growth counter cleared as Linux clears
// `snd_cwnd_cnt`: on entering CWR or fast recovery (`tcp_init_cwnd_reduction`) and on a
// timeout (`tcp_enter_loss`, net/ipv4/tcp_input.c). TcpLinuxReno's `m_cWndCnt` is private
// and it has no CongestionStateSet, so the counter carries over a loss and the first
// increase after it comes up to one window early (cause `ns3-reno-cwnd-cnt`). This class
// keeps its own counter; CongestionAvoidance is TcpLinuxReno's, line for line, with
// m_suppressIncreaseIfCwndLimited at its default (true: this program never calls
// SetSuppressIncreaseIfCwndLimited, and 3.44 has no attribute for it). With
// `recovery_exit_linux 1` it runs as TcpLinuxRenoCntLinuxExit (LINUX_RECOVERY_EXIT).
// Selected with `reno_cnt_linux 1`.
bool g_renoCntLinux = false;

class TcpLinuxRenoCnt : public TcpLinuxReno
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::TcpLinuxRenoCnt")
                                .SetParent<TcpLinuxReno>()
                                .AddConstructor<TcpLinuxRenoCnt>()
                                .SetGroupName("Internet");
        return tid;
    }

    // ns-3 asks for ssthresh exactly where Linux runs tcp_init_cwnd_reduction: on
    // entering CWR (TcpSocketBase::EnterCwr, which sets the state without calling
    // CongestionStateSet) and fast recovery (EnterRecovery); on a timeout only when not
    // already in loss, so CA_LOSS clears the counter as tcp_enter_loss does, always.
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        m_cWndCnt = 0;
        return TcpLinuxReno::GetSsThresh(tcb, bytesInFlight);
    }

    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override
    {
        if (newState == TcpSocketState::CA_LOSS)
        {
            m_cWndCnt = 0;
        }
        TcpLinuxReno::CongestionStateSet(tcb, newState);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpLinuxRenoCnt>(this);
    }

  protected:
    void CongestionAvoidance(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        if (!tcb->m_isCwndLimited)
        {
            return;
        }
        uint32_t w = tcb->m_cWnd / tcb->m_segmentSize;
        if (w == 0)
        {
            w = 1;
        }
        if (m_cWndCnt >= w)
        {
            m_cWndCnt = 0;
            tcb->m_cWnd += tcb->m_segmentSize;
        }
        m_cWndCnt += segmentsAcked;
        if (m_cWndCnt >= w)
        {
            uint32_t delta = m_cWndCnt / w;
            m_cWndCnt -= delta * w;
            tcb->m_cWnd += delta * tcb->m_segmentSize;
        }
    }

  private:
    uint32_t m_cWndCnt{0};
};

NS_OBJECT_ENSURE_REGISTERED(TcpLinuxRenoCnt);
LINUX_RECOVERY_EXIT(TcpLinuxRenoCntLinuxExit, TcpLinuxRenoCnt);

// The congestion control to run for ns-3's `name`, with the corrections asked for: the
// Reno counter's (TcpLinuxRenoCnt), then Linux's recovery exit (the `...LinuxExit`
// subclass that LINUX_RECOVERY_EXIT made of it).
std::string
CongestionType(const std::string& name)
{
    std::string base =
        g_renoCntLinux && name == "ns3::TcpLinuxReno" ? "ns3::TcpLinuxRenoCnt" : name;
    if (g_recoveryExitLinux &&
        (base == "ns3::TcpLinuxReno" || base == "ns3::TcpLinuxRenoCnt" ||
         base == "ns3::TcpCubic" || base == "ns3::TcpDctcp"))
    {
        return base + "LinuxExit";
    }
    return base;
}

// ns-3 3.44's TcpPrrRecovery with its 32-bit overflow fixed (ns-3 issue #1282, fixed
// after 3.44): `m_prrDelivered * m_ssThresh` is computed in 64 bits, as Linux's
// `tcp_cwnd_reduction` does (`div_u64`). In 3.44 the product wraps once it passes 2^32
// (ssthresh above ~32 segments), sendCount goes negative and the sender falls silent for
// the rest of every reduction. Selected with `prr64 1` (cause `ns3-prr-overflow`);
// otherwise the body is TcpPrrRecovery's, line for line.
class TcpPrrRecovery64 : public TcpClassicRecovery
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::TcpPrrRecovery64")
                                .SetParent<TcpClassicRecovery>()
                                .AddConstructor<TcpPrrRecovery64>()
                                .SetGroupName("Internet");
        return tid;
    }

    std::string GetName() const override
    {
        return "PrrRecovery64";
    }

    void EnterRecovery(Ptr<TcpSocketState> tcb,
                       uint32_t,
                       uint32_t,
                       uint32_t deliveredBytes) override
    {
        m_prrOut = 0;
        m_prrDelivered = 0;
        m_recoveryFlightSize = tcb->m_bytesInFlight;
        DoRecovery(tcb, deliveredBytes, true);
    }

    void DoRecovery(Ptr<TcpSocketState> tcb, uint32_t deliveredBytes, bool isDupAck) override
    {
        if (isDupAck && m_prrDelivered < m_recoveryFlightSize &&
            !(g_prrLinuxDelivered && deliveredBytes > 0))
        {
            deliveredBytes += tcb->m_segmentSize;
        }
        if (deliveredBytes == 0)
        {
            return;
        }
        m_prrDelivered += deliveredBytes;
        int sendCount;
        if (tcb->m_bytesInFlight > tcb->m_ssThresh)
        {
            sendCount = std::ceil(static_cast<uint64_t>(m_prrDelivered) * tcb->m_ssThresh * 1.0 /
                                  m_recoveryFlightSize) -
                        m_prrOut;
        }
        else
        {
            int limit = std::max(m_prrDelivered - m_prrOut, deliveredBytes);
            if (tcb->m_isRetransDataAcked)
            {
                limit += tcb->m_segmentSize;
            }
            sendCount = std::min(limit, static_cast<int>(tcb->m_ssThresh - tcb->m_bytesInFlight));
        }
        sendCount = std::max(sendCount, static_cast<int>(m_prrOut > 0 ? 0 : tcb->m_segmentSize));
        tcb->m_cWnd = tcb->m_bytesInFlight + sendCount;
        tcb->m_cWndInfl = tcb->m_cWnd;
    }

    void ExitRecovery(Ptr<TcpSocketState> tcb) override
    {
        tcb->m_cWndInfl = tcb->m_cWnd;
        NoteReductionEnd(tcb);
    }

    void UpdateBytesSent(uint32_t bytesSent) override
    {
        m_prrOut += bytesSent;
    }

    Ptr<TcpRecoveryOps> Fork() override
    {
        return CopyObject<TcpPrrRecovery64>(this);
    }

  private:
    uint32_t m_prrDelivered{0};
    uint32_t m_prrOut{0};
    uint32_t m_recoveryFlightSize{0};
};

NS_OBJECT_ENSURE_REGISTERED(TcpPrrRecovery64);

// Linux's ECE latch on the receiver (`ece_latch_linux 1`, with `ce_quickack_linux 1`;
// cause `ns3-ece-latch`). Linux echoes ECE while TCP_ECN_DEMAND_CWR is set (tcp_ecn_send,
// net/ipv4/tcp_output.c); tcp_ecn_accept_cwr clears it on any segment with CWR, and the
// CE check that follows (__tcp_ecn_check_ce, net/ipv4/tcp_input.c) sets it again only if
// that segment is itself CE. ns-3 3.44 (TcpSocketBase::DoForwardUp) leaves the echo on
// when the CWR segment arrives in ECN_CE_RCVD, which ForwardUp set for any new CE segment
// and which lasts until the next ACK is sent: a CE segment just before the CWR one whose
// ACK is being delayed keeps ns-3 echoing for one more window, and the sender reduces
// again. TcpSocketCeQuickAck's m_demandCwr is Linux's latch.
bool g_eceLatchLinux = false;
uint64_t g_eceLatchCleared = 0;
uint64_t g_cwrQuickAcks = 0;

// ns-3 3.44's receiver with Linux's quick ACKs on a CE mark (cause `ns3-ce-delayed-ack`).
// On the first CE segment while no CWR is awaited, Linux `__tcp_ecn_check_ce` calls
// `tcp_enter_quickack_mode(sk, 2)` ("Better not delay acks, sender can have a very low
// cwnd", net/ipv4/tcp_input.c), so that segment and the next are ACKed at once, and sets
// TCP_ECN_DEMAND_CWR, which a segment with CWR clears (`tcp_ecn_accept_cwr`, before the
// CE check). ns-3's `TcpSocketBase::ReceivedData` only echoes ECE on ACKs its delayed-ACK
// rule sends anyway. This socket keeps Linux's demand-CWR latch and, for a quick ACK,
// sets the delayed-ACK counter one short of its maximum, so that TcpSocketBase's own
// in-sequence path sends the ACK (with ECE) at once. TcpL4Protocol::CreateSocket makes a
// plain TcpSocketBase, so the receivers' sinks use TcpSocketFactoryCeQuickAck below, which
// builds this socket as CreateSocket builds its own. Selected with `ce_quickack_linux 1`.
class TcpSocketCeQuickAck : public TcpSocketBase
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::TcpSocketCeQuickAck")
                                .SetParent<TcpSocketBase>()
                                .AddConstructor<TcpSocketCeQuickAck>()
                                .SetGroupName("Internet");
        return tid;
    }

    TcpSocketCeQuickAck() = default;
    TcpSocketCeQuickAck(const TcpSocketCeQuickAck&) = default;

  protected:
    Ptr<TcpSocketBase> Fork() override
    {
        return CopyObject<TcpSocketCeQuickAck>(this);
    }

    void ReceivedData(Ptr<Packet> p, const TcpHeader& tcpHeader) override
    {
        // Linux tcp_ecn_accept_cwr, for every congestion control: "If the sender is
        // telling us it has entered CWR, then its cwnd may be very low (even just 1
        // packet), so we should ACK immediately" (ICSK_ACK_NOW for a segment with data;
        // include/net/tcp_ecn.h, net/ipv4/tcp_input.c before 6.x). ns-3 delays it as any
        // segment. Ending the delayed-ACK count makes TcpSocketBase::ReceivedData ACK now.
        if ((tcpHeader.GetFlags() & TcpHeader::CWR) && p->GetSize() > 0)
        {
            ++g_cwrQuickAcks;
            AckAtOnce();
        }
        // DCTCP's receiver state machine owns the ECE (Linux dctcp_ece_ack_update sets
        // TCP_ECN_DEMAND_CWR itself on CA_EVENT_ECN_IS_CE, before the quick-ACK test,
        // so a DCTCP socket never enters quick-ACK mode here); ns-3's TcpDctcp does that.
        if (DynamicCast<TcpDctcp>(m_congestionControl))
        {
            TcpSocketBase::ReceivedData(p, tcpHeader);
            return;
        }
        if (tcpHeader.GetFlags() & TcpHeader::CWR)
        {
            m_demandCwr = false;
        }
        // ForwardUp has set ECN_CE_RCVD and m_ecnCESeq for a valid (new) CE segment
        bool ce = m_tcb->m_ecnState == TcpSocketState::ECN_CE_RCVD &&
                  m_ecnCESeq.Get() == tcpHeader.GetSequenceNumber();
        if (ce && !m_demandCwr)
        {
            m_quickAcks = 2;
            m_demandCwr = true;
        }
        if (m_quickAcks > 0 && p->GetSize() > 0)
        {
            --m_quickAcks;
            AckAtOnce();
        }
        // With `ece_latch_linux 1` the ACKs echo ECE exactly while Linux's latch is set:
        // ns-3's DoForwardUp ends the echo on a CWR segment only if m_ecnState !=
        // ECN_CE_RCVD, and ECN_CE_RCVD stays from an earlier CE segment until its
        // (delayed) ACK goes out, so the echo would run on past the CWR for a window.
        if (g_eceLatchLinux && !m_demandCwr &&
            (m_tcb->m_ecnState == TcpSocketState::ECN_CE_RCVD ||
             m_tcb->m_ecnState == TcpSocketState::ECN_SENDING_ECE))
        {
            ++g_eceLatchCleared;
            m_tcb->m_ecnState = TcpSocketState::ECN_IDLE;
        }
        TcpSocketBase::ReceivedData(p, tcpHeader);
    }

  private:
    // The delayed-ACK counter one short of its maximum: TcpSocketBase::ReceivedData's
    // in-sequence path then ACKs this segment at once.
    void AckAtOnce()
    {
        m_delAckCount = m_delAckMaxCount > 0 ? m_delAckMaxCount - 1 : 0;
    }

    bool m_demandCwr{false};
    uint32_t m_quickAcks{0};
};

NS_OBJECT_ENSURE_REGISTERED(TcpSocketCeQuickAck);

class TcpSocketFactoryCeQuickAck : public SocketFactory
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::TcpSocketFactoryCeQuickAck")
                                .SetParent<SocketFactory>()
                                .AddConstructor<TcpSocketFactoryCeQuickAck>()
                                .SetGroupName("Internet");
        return tid;
    }

    // As TcpL4Protocol::CreateSocket(congestionTypeId, recoveryTypeId), with this socket.
    Ptr<Socket> CreateSocket() override
    {
        Ptr<TcpL4Protocol> tcp = GetObject<TcpL4Protocol>();
        TypeIdValue rttType;
        TypeIdValue ccType;
        TypeIdValue recoveryType;
        tcp->GetAttribute("RttEstimatorType", rttType);
        tcp->GetAttribute("SocketType", ccType);
        tcp->GetAttribute("RecoveryType", recoveryType);
        ObjectFactory rtt(rttType.Get().GetName());
        ObjectFactory cc(ccType.Get().GetName());
        ObjectFactory recovery(recoveryType.Get().GetName());
        Ptr<TcpSocketCeQuickAck> socket = CreateObject<TcpSocketCeQuickAck>();
        socket->SetNode(GetObject<Node>());
        socket->SetTcp(tcp);
        socket->SetRtt(rtt.Create<RttEstimator>());
        socket->SetCongestionControlAlgorithm(cc.Create<TcpCongestionOps>());
        socket->SetRecoveryAlgorithm(recovery.Create<TcpRecoveryOps>());
        return socket;
    }
};

NS_OBJECT_ENSURE_REGISTERED(TcpSocketFactoryCeQuickAck);

// Linux's RTO on ns-3's estimator: ns-3 computes RFC 6298's max(MinRto, SRTT + 4 RTTVAR)
// (TcpSocketBase::NewAck); Linux `tcp_set_rto` gives SRTT + max(4 mdev, rto_min), i.e.
// never less than rto_min above SRTT. Exposing a variation of at least rto_min / 4 while
// the estimator keeps updating the unclamped one gives Linux's value through ns-3's own
// formula. Selected with `rto_linux 1` (cause `ns3-rto`).
int64_t g_rtoMinNs = 200000000;

class RttLinux : public RttMeanDeviation
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::RttLinux")
                                .SetParent<RttMeanDeviation>()
                                .AddConstructor<RttLinux>()
                                .SetGroupName("Internet");
        return tid;
    }

    void Measurement(Time m) override
    {
        if (m_haveRaw)
        {
            m_estimatedVariation = m_rawVariation;
        }
        RttMeanDeviation::Measurement(m);
        m_rawVariation = m_estimatedVariation;
        m_haveRaw = true;
        m_estimatedVariation = std::max(m_rawVariation, NanoSeconds(g_rtoMinNs / 4));
    }

    Ptr<RttEstimator> Copy() const override
    {
        return CopyObject<RttLinux>(this);
    }

    void Reset() override
    {
        RttMeanDeviation::Reset();
        m_haveRaw = false;
    }

  private:
    Time m_rawVariation;
    bool m_haveRaw = false;
};

NS_OBJECT_ENSURE_REGISTERED(RttLinux);

// Poisson UDP background: packets of a fixed size with exponential gaps of mean
// size * 8 / rate, as ccsim's `pattern = "poisson"` UDP source.
class PoissonSender : public Application
{
  public:
    void Setup(Address peer, uint64_t rateBps, uint32_t wireBytes, int64_t stream)
    {
        m_peer = peer;
        m_payload = wireBytes - 28; // IPv4 20 + UDP 8
        m_gap = CreateObject<ExponentialRandomVariable>();
        m_gap->SetAttribute("Mean", DoubleValue(wireBytes * 8.0 / rateBps));
        m_gap->SetStream(stream);
    }

  private:
    void StartApplication() override
    {
        m_socket = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
        m_socket->Bind();
        m_socket->Connect(m_peer);
        SendOne();
    }

    void StopApplication() override
    {
        m_event.Cancel();
    }

    void SendOne()
    {
        m_socket->Send(Create<Packet>(m_payload));
        m_event = Simulator::Schedule(Seconds(m_gap->GetValue()), &PoissonSender::SendOne, this);
    }

    Address m_peer;
    uint32_t m_payload = 0;
    Ptr<ExponentialRandomVariable> m_gap;
    Ptr<Socket> m_socket;
    EventId m_event;
};

struct FlowStats
{
    uint64_t rxStart = 0;
    uint64_t rxEnd = 0;
    uint32_t retransmissions = 0;
    uint32_t recoveries = 0;
    uint32_t losses = 0; // entries into CA_LOSS (retransmission timeouts)
    uint32_t cwrs = 0;   // entries into CA_CWR (ECN reductions)
    int lastEcnState = -1;
    bool ecnSeenActive = false; // left ECN_DISABLED at some point
    std::string ccName;
};

struct QSnap
{
    uint64_t received = 0;
    uint64_t dropped = 0;
    uint64_t marked = 0;
    uint64_t sentPackets = 0;
    uint64_t sentBytes = 0;
};

QSnap
Snap(Ptr<QueueDisc> q)
{
    const QueueDisc::Stats& st = q->GetStats();
    QSnap s;
    s.received = st.nTotalReceivedPackets;
    s.dropped = st.nTotalDroppedPackets;
    s.marked = st.nTotalMarkedPackets;
    s.sentPackets = st.nTotalSentPackets;
    s.sentBytes = st.nTotalSentBytes;
    return s;
}

// Global measurement state (one simulation per process).
std::vector<FlowStats> g_flows;
std::vector<Ptr<PacketSink>> g_sinks;
std::vector<Ptr<PacketSink>> g_udpSinks;
std::vector<std::pair<uint64_t, uint64_t>> g_udpRx; // bytes at window start, end
Ptr<QueueDisc> g_qdisc;
QSnap g_qStart;
QSnap g_qEnd;
bool g_inWindow = false;

// The sojourn times of one queue disc's packets: queue-disc enqueue to the start of
// transmission on its device's wire (PhyTxBegin), for the packets that started inside
// the measurement window. `fifo` holds the packets the queue disc handed to the device,
// in order: (packet object, queue-disc enqueue ns). Matched by object identity: the device
// transmits the very Packet the queue disc dequeued (the PPP header is added in place),
// while packet uids are no key, since TCP segments cut from one application write share
// the write's uid.
struct SojournProbe
{
    std::deque<std::pair<const Packet*, int64_t>> fifo;
    std::vector<int64_t> samples;
    uint64_t mismatch = 0;
};

SojournProbe g_bottleneckProbe;
uint64_t g_bytesTxInWindow = 0;

void
OnQdiscDequeue(SojournProbe* probe, Ptr<const QueueDiscItem> item)
{
    probe->fifo.emplace_back(PeekPointer(item->GetPacket()), item->GetTimeStamp().GetNanoSeconds());
}

void
OnQdiscMark(Ptr<const QueueDiscItem> item, const char* reason)
{
    std::cerr << "mark " << Simulator::Now().GetSeconds() << " "
              << (Simulator::Now() - item->GetTimeStamp()).GetSeconds() * 1e3 << " "
              << g_qdisc->GetNPackets() << " " << reason << "\n";
}

// CoDel and FQ-CoDel drop at dequeue: the "Dequeue" trace has already recorded such a
// packet, which will never reach the wire, so take it back out (it is the newest entry).
void
OnQdiscDropAfterDequeue(SojournProbe* probe, Ptr<const QueueDiscItem> item, const char*)
{
    const Packet* key = PeekPointer(item->GetPacket());
    for (auto it = probe->fifo.rbegin(); it != probe->fifo.rend(); ++it)
    {
        if (it->first == key)
        {
            probe->fifo.erase(std::next(it).base());
            return;
        }
    }
}

void
OnPhyTxBegin(SojournProbe* probe, Ptr<const Packet> p)
{
    if (probe->fifo.empty())
    {
        ++probe->mismatch;
        return;
    }
    auto [key, ts] = probe->fifo.front();
    probe->fifo.pop_front();
    if (key != PeekPointer(p))
    {
        ++probe->mismatch;
        return;
    }
    if (g_inWindow)
    {
        probe->samples.push_back(Simulator::Now().GetNanoSeconds() - ts);
    }
    static const bool dbg = std::getenv("DUMBBELL_SOJOURN") != nullptr;
    if (dbg)
    {
        std::cerr << "sojourn " << Simulator::Now().GetSeconds() << " "
                  << (Simulator::Now().GetNanoSeconds() - ts) / 1e6 << "\n";
    }
}

// Watch `qdisc` (the root queue disc of `dev`) with `probe`.
void
ConnectSojournProbe(SojournProbe* probe, Ptr<QueueDisc> qdisc, Ptr<NetDevice> dev)
{
    probe->samples.reserve(1 << 16);
    qdisc->TraceConnectWithoutContext("Dequeue", MakeBoundCallback(&OnQdiscDequeue, probe));
    qdisc->TraceConnectWithoutContext("DropAfterDequeue",
                                      MakeBoundCallback(&OnQdiscDropAfterDequeue, probe));
    dev->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&OnPhyTxBegin, probe));
}

void
WriteSojourn(const std::string& path, const SojournProbe& probe)
{
    std::ofstream so(path, std::ios::binary);
    so.write(reinterpret_cast<const char*>(probe.samples.data()),
             static_cast<std::streamsize>(probe.samples.size() * sizeof(int64_t)));
}

// A device pulls (`device_pull 1`; cause `ns3-device-slot`): it takes the
// next packet from the queue disc only when the wire frees, as ccsim's link does.
// ns-3's own device queue (1 packet, its minimum) holds one packet more: when the device
// is idle PointToPointNetDevice::Send enqueues and at once dequeues the packet, and
// NetDeviceQueue::PacketDequeued then wakes the queue disc (ScheduleNow) because the
// queue has room, so the queue disc hands over one more packet, which waits in the
// device queue for a whole transmission time (src/network/utils/
// net-device-queue-interface.h; point-to-point-net-device.cc). Here the device queue's
// wake callback is ours: while the wire is busy it stops the queue again instead of
// running the queue disc, and when the wire frees (PhyTxEnd) the queue disc is woken;
// ScheduleNow, since TransmitComplete clears m_currentPkt after its PhyTxEnd trace.
// One such device (the dumbbell's bottleneck, or a parking-lot hop's forward device).
struct DevicePull
{
    Ptr<NetDeviceQueue> txq;
    Ptr<QueueDisc> qdisc;
    bool wireBusy = false;
    uint64_t wakes = 0; // queue-disc runs our callback started (wire idle)
    uint64_t held = 0;  // wakes it refused while the wire was busy
};

DevicePull g_bottleneckPull;

void
PullWakeCallback(DevicePull* pull)
{
    if (pull->wireBusy)
    {
        ++pull->held;
        pull->txq->Stop();
        return;
    }
    ++pull->wakes;
    pull->qdisc->Run();
}

void
PullInstall(DevicePull* pull)
{
    // At t = 0, after TrafficControlLayer::ScanDevices (run by the router's
    // Node::Initialize, scheduled when the node was made) set QueueDisc::Run as the
    // callback, and before any application starts.
    pull->txq->SetWakeCallback(MakeBoundCallback(&PullWakeCallback, pull));
}

void
PullTxBegin(DevicePull* pull, Ptr<const Packet>)
{
    pull->wireBusy = true;
}

void
PullWake(DevicePull* pull)
{
    pull->txq->Wake();
}

void
PullTxEnd(DevicePull* pull, Ptr<const Packet>)
{
    pull->wireBusy = false;
    Simulator::ScheduleNow(&PullWake, pull);
}

// Make `dev` pull from its root queue disc `qdisc` as `pull` (connected after the sojourn
// probe's PhyTxBegin, so that the probe sees each packet first).
void
InstallDevicePull(DevicePull* pull, Ptr<PointToPointNetDevice> dev, Ptr<QueueDisc> qdisc)
{
    pull->txq = dev->GetObject<NetDeviceQueueInterface>()->GetTxQueue(0);
    pull->qdisc = qdisc;
    dev->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&PullTxBegin, pull));
    dev->TraceConnectWithoutContext("PhyTxEnd", MakeBoundCallback(&PullTxEnd, pull));
    Simulator::Schedule(Seconds(0), &PullInstall, pull);
}

// A parking lot's hop (`hop` lines): its forward device's queue disc, watched as the
// dumbbell's bottleneck is, and its counters at both ends of the window.
struct HopState
{
    Ptr<QueueDisc> qdisc;
    Ptr<PointToPointNetDevice> fwd;
    Ptr<PointToPointNetDevice> rev;
    SojournProbe probe;
    DevicePull pull; // with `device_pull 1`
    QSnap start;
    QSnap end;
};

std::deque<HopState> g_hops; // a deque: the probes' addresses stay put as hops are added

void
WindowStart()
{
    g_inWindow = true;
    if (g_qdisc)
        g_qStart = Snap(g_qdisc);
    for (HopState& h : g_hops)
        h.start = Snap(h.qdisc);
    for (size_t i = 0; i < g_sinks.size(); ++i)
    {
        g_flows[i].rxStart = g_sinks[i]->GetTotalRx();
    }
    for (size_t i = 0; i < g_udpSinks.size(); ++i)
    {
        g_udpRx[i].first = g_udpSinks[i]->GetTotalRx();
    }
}

void
WindowEnd()
{
    g_inWindow = false;
    if (g_qdisc)
        g_qEnd = Snap(g_qdisc);
    for (HopState& h : g_hops)
        h.end = Snap(h.qdisc);
    for (size_t i = 0; i < g_sinks.size(); ++i)
    {
        g_flows[i].rxEnd = g_sinks[i]->GetTotalRx();
    }
    for (size_t i = 0; i < g_udpSinks.size(); ++i)
    {
        g_udpRx[i].second = g_udpSinks[i]->GetTotalRx();
    }
}

double g_dbgRto = 0;
double g_dbgRtt = 0;

void
DbgRto(Time, Time now)
{
    g_dbgRto = now.GetSeconds();
}

void
DbgRtt(Time, Time now)
{
    g_dbgRtt = now.GetSeconds();
}

void
DbgCwnd(uint32_t, uint32_t now)
{
    std::cerr << "cwnd " << Simulator::Now().GetSeconds() << " " << now / 1448.0 << "\n";
}

void
OnCongState(size_t i, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    if (now == TcpSocketState::CA_RECOVERY)
    {
        ++g_flows[i].recoveries;
        if (std::getenv("DUMBBELL_DEBUG"))
            std::cerr << Simulator::Now().GetSeconds() << " flow " << i << " recovery rto "
                      << g_dbgRto << " srtt " << g_dbgRtt << "\n";
    }
    else if (now == TcpSocketState::CA_LOSS)
    {
        ++g_flows[i].losses;
        if (std::getenv("DUMBBELL_DEBUG"))
            std::cerr << Simulator::Now().GetSeconds() << " flow " << i << " RTO\n";
    }
    else if (now == TcpSocketState::CA_CWR)
        ++g_flows[i].cwrs;
}

void
OnEcnState(size_t i, TcpSocketState::EcnState_t, TcpSocketState::EcnState_t now)
{
    g_flows[i].lastEcnState = static_cast<int>(now);
    if (now != TcpSocketState::ECN_DISABLED)
        g_flows[i].ecnSeenActive = true;
}

void
OnRetransmission(size_t i,
                 Ptr<const Packet>,
                 const TcpHeader& h,
                 const Address&,
                 const Address&,
                 Ptr<const TcpSocketBase>)
{
    ++g_flows[i].retransmissions;
    static const bool dbg = std::getenv("DUMBBELL_DEBUG") != nullptr;
    if (dbg)
        std::cerr << Simulator::Now().GetSeconds() << " flow " << i << " retransmits "
                  << h.GetSequenceNumber().GetValue() / 1448 << "\n";
}

// FQ-CoDel's minimum-backlog test on the whole qdisc (`fqcodel_total_min_bytes B`; cause
// `ns3-fqcodel-flow-backlog`). ns-3's FqCoDelQueueDisc runs one CoDelQueueDisc per flow,
// whose OkToDrop stays out of the dropping state while its own queue's bytes after the
// dequeue are `< MinBytes` (codel-queue-disc.cc); Linux's fq_codel_dequeue passes the
// qdisc's backlog, `&sch->qstats.backlog`, to codel_dequeue, whose codel_should_drop
// tests `*backlog <= mtu` (net/sched/sch_fq_codel.c, include/net/codel_impl.h). The other
// flows' bytes do not change while one flow queue dequeues (and drops), so each time a
// flow queue gives up its head packet, just before OkToDrop reads it, that flow's
// MinBytes is set to B - (bytes queued in the other flows), floored at 0: then "own
// bytes < MinBytes" is "qdisc bytes < B", Linux's test with B = mtu + 1.
// One exception: ns-3's CoDel cannot drop a flow queue's last packet. After a drop its
// DoDequeue takes the next packet and, at `end:`, reads that packet's timestamp without a
// null check (codel-queue-disc.cc), which ns-3's own test never reaches (it never drops
// with fewer than MinBytes behind); Linux's codel_dequeue returns NULL there and
// fq_codel_dequeue moves on to the next flow. So a packet that would be dropped (not an
// ECT packet under ECN, which is marked and never reaches that path) keeps MinBytes at
// least 1: the flow's last packet is not dropped, where Linux may drop it.
struct FqTotalBacklog
{
    Ptr<QueueDisc> fq;
    bool ecn = false; // the FQ-CoDel marks ECT packets
    uint32_t minBytes = 0;
    std::vector<Ptr<QueueDisc>> flows;
    std::vector<Ptr<QueueDisc::InternalQueue>> queues;
    std::vector<uint32_t> set; // each flow's MinBytes as last set
    uint64_t updates = 0;
};

FqTotalBacklog g_fqTotal;

void
FqFlowHeadDequeued(size_t i, Ptr<const QueueDiscItem> item)
{
    uint64_t others = 0;
    for (size_t j = 0; j < g_fqTotal.queues.size(); ++j)
    {
        if (j != i)
            others += g_fqTotal.queues[j]->GetNBytes();
    }
    Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
    bool markable = g_fqTotal.ecn && ip && ip->GetHeader().GetEcn() != Ipv4Header::ECN_NotECT;
    uint32_t floor = markable ? 0 : 1;
    uint32_t mb = others >= g_fqTotal.minBytes ? 0 : g_fqTotal.minBytes - others;
    mb = std::max(mb, floor);
    if (mb != g_fqTotal.set[i])
    {
        g_fqTotal.flows[i]->SetAttribute("MinBytes", UintegerValue(mb));
        g_fqTotal.set[i] = mb;
        ++g_fqTotal.updates;
    }
}

// FQ-CoDel adds a flow's class before it enqueues the flow's first packet, whose
// Enqueue trace reaches the parent (QueueDisc::AddQueueDiscClass): watch new flows there.
void
FqEnqueued(Ptr<const QueueDiscItem>)
{
    while (g_fqTotal.flows.size() < g_fqTotal.fq->GetNQueueDiscClasses())
    {
        size_t i = g_fqTotal.flows.size();
        Ptr<QueueDisc> qd = g_fqTotal.fq->GetQueueDiscClass(i)->GetQueueDisc();
        NS_ABORT_MSG_IF(!DynamicCast<CoDelQueueDisc>(qd), "FQ-CoDel flow is not a CoDel");
        Ptr<QueueDisc::InternalQueue> q = qd->GetInternalQueue(0);
        q->TraceConnectWithoutContext("Dequeue", MakeBoundCallback(&FqFlowHeadDequeued, i));
        UintegerValue mb;
        qd->GetAttribute("MinBytes", mb);
        g_fqTotal.flows.push_back(qd);
        g_fqTotal.queues.push_back(q);
        g_fqTotal.set.push_back(static_cast<uint32_t>(mb.Get()));
    }
}

// PIE's de-randomisation as Linux's (`pie_accu_linux 1`; cause `ns3-pie-accu-prob`).
// Linux `pie_drop_early` (include/net/pie.h) clears `accu_prob` when the coin toss picks a
// packet (`if ((rnd >> BITS_PER_BYTE) < local_prob) { vars->accu_prob = 0; return true; }`)
// and `pie_qdisc_enqueue` again on every drop (`out:`); ns-3 3.44's
// `PieQueueDisc::DropEarly` returns `u <= p` without clearing `m_accuProb`, which only its
// drop paths in `DoEnqueue` clear. Under ECN the picked packets are marked, not dropped,
// so ns-3's accumulator is never cleared while p > 0: it passes 8.5 within 8.5 / p packets,
// and from then on every packet is marked. Here a PIE early mark (its "Unforced mark")
// clears `m_accuProb` when it came from the coin toss, i.e. when the accumulator is below
// 8.5 (at or above it DropEarly returned true before tossing, and Linux keeps it too).
// `m_accuProb` is private: its address is taken by an explicit instantiation, the one
// context where C++ does not check access ([temp.spec.general]: "the usual access
// checking rules do not apply to names used to specify explicit instantiations").
template <typename Tag, typename Tag::type Member>
struct PrivateMember
{
    friend typename Tag::type Get(Tag)
    {
        return Member;
    }
};

struct PieAccuProb
{
    using type = double PieQueueDisc::*;
    friend type Get(PieAccuProb);
};

template struct PrivateMember<PieAccuProb, &PieQueueDisc::m_accuProb>;

Ptr<PieQueueDisc> g_pie;
uint64_t g_pieAccuClears = 0;

void
PieMarked(Ptr<const QueueDiscItem>, const char* reason)
{
    if (std::string(reason) != PieQueueDisc::UNFORCED_MARK)
    {
        return;
    }
    double& accu = PeekPointer(g_pie)->*Get(PieAccuProb());
    if (accu < 8.5)
    {
        accu = 0;
        ++g_pieAccuClears;
    }
}

DataRate
WireRate(const RunConfig& c, uint64_t bps)
{
    // ns-3's point-to-point device serialises the IP packet plus a 2-byte PPP header;
    // scale the rate so that a full-size packet takes exactly as long as in ccsim.
    long double r = static_cast<long double>(bps) * (c.wirePacketBytes + c.pppHeaderBytes) /
                    c.wirePacketBytes;
    return DataRate(static_cast<uint64_t>(r + 0.5L));
}

std::string
JsonEscape(const std::string& s)
{
    std::string o;
    for (char ch : s)
    {
        if (ch == '"' || ch == '\\')
            o += '\\';
        o += ch;
    }
    return o;
}

// The queue disc under test given its attributes (those that make it behave as ccsim's).
void
ConfigureQueueDisc(const RunConfig& c,
                   Ptr<QueueDisc> aqm,
                   const std::vector<std::pair<std::string, std::string>>& attrs)
{
    for (auto& [name, value] : attrs)
    {
        aqm->SetAttribute(name, StringValue(value));
    }
    // FQ-CoDel's quantum has no attribute; it defaults to the device's MTU, which a child
    // of the token bucket cannot see (its configuration check then fails). Set it to the
    // MTU, 1500 B, as ccsim's quantum.
    if (Ptr<FqCoDelQueueDisc> fq = DynamicCast<FqCoDelQueueDisc>(aqm))
    {
        fq->SetQuantum(c.wirePacketBytes);
    }
}

// Every TCP flow's sink on receiver i and bulk sender on sender i (to the receiver's
// address in `rif[i]`), with the per-flow traces; senders start at their `startNs`.
std::vector<Ptr<BulkSender>>
InstallFlows(const RunConfig& c,
             NodeContainer& senders,
             NodeContainer& receivers,
             const std::vector<Ipv4InterfaceContainer>& rif,
             uint16_t port)
{
    const size_t n = c.flows.size();
    g_flows.resize(n);
    std::vector<Ptr<BulkSender>> apps(n);
    for (size_t i = 0; i < n; ++i)
    {
        if (c.ceQuickAckLinux && !receivers.Get(i)->GetObject<TcpSocketFactoryCeQuickAck>())
        {
            receivers.Get(i)->AggregateObject(CreateObject<TcpSocketFactoryCeQuickAck>());
        }
        PacketSinkHelper sink(c.ceQuickAckLinux ? "ns3::TcpSocketFactoryCeQuickAck"
                                                : "ns3::TcpSocketFactory",
                              InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sink.Install(receivers.Get(i));
        sa.Start(Seconds(0));
        g_sinks.push_back(DynamicCast<PacketSink>(sa.Get(0)));

        Ptr<BulkSender> app = CreateObject<BulkSender>();
        app->Setup(InetSocketAddress(rif[i].GetAddress(1), port), c.flows[i].ecn);
        app->m_onSocket.push_back([i](Ptr<TcpSocketBase> s) {
            s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, i));
            s->TraceConnectWithoutContext("EcnState", MakeBoundCallback(&OnEcnState, i));
            if (std::getenv("DUMBBELL_CWND") && std::atoi(std::getenv("DUMBBELL_CWND")) == int(i))
                s->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&DbgCwnd));
            if (std::getenv("DUMBBELL_DEBUG"))
            {
                s->TraceConnectWithoutContext("RTO", MakeCallback(&DbgRto));
                s->TraceConnectWithoutContext("RTT", MakeCallback(&DbgRtt));
            }
            s->TraceConnectWithoutContext("Retransmission",
                                          MakeBoundCallback(&OnRetransmission, i));
        });
        senders.Get(i)->AddApplication(app);
        app->SetStartTime(NanoSeconds(c.flows[i].startNs));
        apps[i] = app;
    }
    return apps;
}

// The flows' part of the output JSON (`"flows": [...` up to its last entry), with the
// congestion control each sender's socket actually ran.
void
WriteFlowsJson(std::ostream& js, const RunConfig& c, const std::vector<Ptr<BulkSender>>& apps)
{
    const size_t n = c.flows.size();
    for (size_t i = 0; i < n; ++i)
    {
        Ptr<TcpSocketBase> s = apps[i]->GetSocket();
        if (s)
        {
            PointerValue ops;
            s->GetAttribute("CongestionOps", ops);
            Ptr<TcpCongestionOps> cc = ops.Get<TcpCongestionOps>();
            g_flows[i].ccName = cc ? cc->GetName() : "?";
        }
    }

    js << "  \"flows\": [\n";
    for (size_t i = 0; i < n; ++i)
    {
        const FlowStats& f = g_flows[i];
        js << "    {\"rx_start\": " << f.rxStart << ", \"rx_end\": " << f.rxEnd
           << ", \"rx_total\": " << g_sinks[i]->GetTotalRx() << ", \"cc\": \""
           << JsonEscape(f.ccName) << "\", \"ecn_requested\": " << (c.flows[i].ecn ? "true" : "false")
           << ", \"ecn_negotiated\": " << (f.ecnSeenActive ? "true" : "false")
           << ", \"retransmissions\": " << f.retransmissions << ", \"recoveries\": " << f.recoveries
           << ", \"timeouts\": " << f.losses << ", \"cwr\": " << f.cwrs << "}"
           << (i + 1 < n ? "," : "") << "\n";
    }
}

// TCP (and queue-disc) defaults for every socket, senders and the receivers' forked
// sockets, with the corrections of ns-3's TCP the configuration asks for.
void
SetTcpDefaults(const RunConfig& c)
{
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(c.mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(c.initialWindow));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(c.bufBytes));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(c.bufBytes));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(c.delayedAck ? 2 : 1));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(NanoSeconds(c.delAckTimeoutNs)));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(NanoSeconds(c.connTimeoutNs)));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(NanoSeconds(c.minRtoNs)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    g_prrLinuxDelivered = c.prr64 >= 2;
    g_recoveryExitLinux = c.recoveryExitLinux != 0;
    g_renoCntLinux = c.renoCntLinux != 0;
    g_eceLatchLinux = c.eceLatchLinux != 0;
    if (g_eceLatchLinux && !c.ceQuickAckLinux)
    {
        NS_FATAL_ERROR("ece_latch_linux needs ce_quickack_linux (its socket keeps the latch)");
    }
    if (g_recoveryExitLinux && !c.prr64)
    {
        NS_FATAL_ERROR("recovery_exit_linux needs prr64 (its ExitRecovery notes the ACK)");
    }
    g_rtoMinNs = c.minRtoNs;
    if (c.rtoLinux)
    {
        Config::SetDefault("ns3::TcpL4Protocol::RttEstimatorType",
                           TypeIdValue(RttLinux::GetTypeId()));
    }
    if (c.prr64)
    {
        Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                           TypeIdValue(TcpPrrRecovery64::GetTypeId()));
    }
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    // Forwarding only: a router checks a packet's destination against the addresses of
    // the interface it arrived on, not of all its (hundreds of) interfaces. No packet is
    // addressed to a router, so this changes nothing but the cost of each hop.
    Config::SetDefault("ns3::Ipv4::StrongEndSystemModel", BooleanValue(true));
    for (auto& [name, value] : c.defaults)
    {
        Config::SetDefault(name, StringValue(value));
    }
    // Receivers accept ECN when the sender asks for it; senders choose per socket.
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", EnumValue(TcpSocketState::AcceptOnly));
}

// Congestion control per host (the receivers too: DCTCP's ACK state machine runs in
// the receiver's congestion-ops object).
void
SetCongestionControl(const RunConfig& c, NodeContainer& senders, NodeContainer& receivers)
{
    const size_t n = c.flows.size();
    for (size_t i = 0; i < n; ++i)
    {
        TypeIdValue cc(TypeId::LookupByName(CongestionType(c.flows[i].cc)));
        senders.Get(i)->GetObject<TcpL4Protocol>()->SetAttribute("SocketType", cc);
        receivers.Get(i)->GetObject<TcpL4Protocol>()->SetAttribute("SocketType", cc);
    }
}

// A queue disc's counters over the measurement window, as a JSON object.
void
WriteWindowJson(std::ostream& js, const QSnap& start, const QSnap& end)
{
    js << "{\"received\": " << end.received - start.received
       << ", \"dropped\": " << end.dropped - start.dropped
       << ", \"marked\": " << end.marked - start.marked
       << ", \"sent_packets\": " << end.sentPackets - start.sentPackets
       << ", \"sent_bytes\": " << end.sentBytes - start.sentBytes << "}";
}

// ccsim's parking lot (`hop` lines; crates/ccsim-core/src/sim/build/network.rs, the
// `parking_lot` generator): routers r0..rN in a chain, hop i (from 1) the link
// r(i-1) -> r(i) whose forward device holds its queue disc over a one-packet device
// queue, and whose ACK direction has the same rate and delay and an ample FIFO; each flow
// a sender on its own access link to router `fromRouter`, carrying half of what the
// flow's base RTT asks beyond the route's propagation delay there and back (in both
// directions, as ccsim's access-up and access-ack-down), and a receiver on a delay-free
// access link to router `toRouter`; static routes along the chain. The TCP settings,
// flows and output are the dumbbell's, with every hop's window counters, checks and
// sojourn samples (file `out_sojourn`.i for hop i).
int
RunParkingLot(const RunConfig& c)
{
    const size_t n = c.flows.size();
    const size_t nHops = c.hops.size();
    NS_ABORT_MSG_IF(!c.udps.empty(), "UDP sources are for the dumbbell only");
    NS_ABORT_MSG_IF(c.shaperRateBps || c.fqTotalMinBytes || c.pieAccuLinux,
                    "shaper, fqcodel_total_min_bytes and pie_accu_linux act on the dumbbell's "
                    "bottleneck only");
    for (const FlowCfg& f : c.flows)
    {
        NS_ABORT_MSG_IF(f.fromRouter < 0 || f.toRouter <= f.fromRouter ||
                            f.toRouter > static_cast<int>(nHops),
                        "a parking-lot flow needs flow_hops FROM TO, 0 <= FROM < TO <= hops");
    }

    NodeContainer routers;
    routers.Create(nHops + 1);
    NodeContainer senders;
    senders.Create(n);
    NodeContainer receivers;
    receivers.Create(n);
    InternetStackHelper stack;
    stack.Install(routers);
    stack.Install(senders);
    stack.Install(receivers);
    SetCongestionControl(c, senders, receivers);

    std::string ample = std::to_string(c.ampleQueuePackets) + "p";
    PointToPointHelper p2p;
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue(ample));
    Ipv4AddressHelper addr;
    TrafficControlHelper none;

    // Hops, each queue disc installed before address assignment (which would install
    // FQ-CoDel); hop i in 10.3.i.0/30.
    std::vector<Ipv4InterfaceContainer> hif(nHops);
    for (size_t i = 0; i < nHops; ++i)
    {
        const HopCfg& h = c.hops[i];
        p2p.SetDeviceAttribute("DataRate", DataRateValue(WireRate(c, h.rateBps)));
        p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(h.delayNs)));
        NetDeviceContainer d = p2p.Install(routers.Get(i), routers.Get(i + 1));
        HopState& hs = g_hops.emplace_back();
        hs.fwd = DynamicCast<PointToPointNetDevice>(d.Get(0));
        hs.rev = DynamicCast<PointToPointNetDevice>(d.Get(1));
        hs.fwd->GetQueue()->SetMaxSize(QueueSize("1p"));
        TrafficControlHelper tch;
        tch.SetRootQueueDisc(h.qdisc);
        hs.qdisc = tch.Install(hs.fwd).Get(0);
        ConfigureQueueDisc(c, hs.qdisc, h.attrs);
        std::string base = "10.3." + std::to_string(i) + ".0";
        addr.SetBase(base.c_str(), "255.255.255.252");
        hif[i] = addr.Assign(d);
        none.Uninstall(hs.rev);
    }

    // Access links: senders' in 10.1/16, receivers' in 10.2/16, one /30 each.
    std::vector<Ptr<NetDevice>> access; // every access device (checks)
    std::vector<Ipv4InterfaceContainer> sif(n);
    std::vector<Ipv4InterfaceContainer> rif(n);
    p2p.SetDeviceAttribute("DataRate", DataRateValue(WireRate(c, c.accessRateBps)));
    addr.SetBase("10.1.0.0", "255.255.255.252");
    for (size_t f = 0; f < n; ++f)
    {
        int64_t routeNs = 0;
        for (int j = c.flows[f].fromRouter; j < c.flows[f].toRouter; ++j)
        {
            routeNs += c.hops[j].delayNs;
        }
        int64_t accessNs = c.flows[f].rttNs / 2 - routeNs;
        NS_ABORT_MSG_IF(accessNs < 0, "flow " << f << ": rtt below its route's propagation RTT");
        p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(accessNs)));
        NetDeviceContainer d = p2p.Install(senders.Get(f), routers.Get(c.flows[f].fromRouter));
        sif[f] = addr.Assign(d);
        addr.NewNetwork();
        access.insert(access.end(), {d.Get(0), d.Get(1)});
    }
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(0)));
    addr.SetBase("10.2.0.0", "255.255.255.252");
    for (size_t f = 0; f < n; ++f)
    {
        NetDeviceContainer d = p2p.Install(routers.Get(c.flows[f].toRouter), receivers.Get(f));
        rif[f] = addr.Assign(d);
        addr.NewNetwork();
        access.insert(access.end(), {d.Get(0), d.Get(1)});
    }
    for (Ptr<NetDevice> d : access)
    {
        none.Uninstall(d); // ample device queues, as ccsim's ample DropTail
    }

    // Static routes: each router reaches a host's /30 over the hop towards the router
    // the host hangs off; the hosts' default routes go to their router.
    Ipv4StaticRoutingHelper srh;
    const Ipv4Mask mask("255.255.255.252");
    auto routeTo = [&](size_t r, Ipv4Address host, int at) {
        if (static_cast<int>(r) == at)
        {
            return; // directly connected
        }
        Ptr<Ipv4> ip = routers.Get(r)->GetObject<Ipv4>();
        bool down = at > static_cast<int>(r);
        Ptr<NetDevice> dev = down ? Ptr<NetDevice>(g_hops[r].fwd) : Ptr<NetDevice>(g_hops[r - 1].rev);
        Ipv4Address gw = down ? hif[r].GetAddress(1) : hif[r - 1].GetAddress(0);
        srh.GetStaticRouting(ip)->AddNetworkRouteTo(host.CombineMask(mask),
                                                    mask,
                                                    gw,
                                                    ip->GetInterfaceForDevice(dev));
    };
    for (size_t f = 0; f < n; ++f)
    {
        for (size_t r = 0; r <= nHops; ++r)
        {
            routeTo(r, sif[f].GetAddress(0), c.flows[f].fromRouter);
            routeTo(r, rif[f].GetAddress(1), c.flows[f].toRouter);
        }
        Ptr<Ipv4> si = senders.Get(f)->GetObject<Ipv4>();
        srh.GetStaticRouting(si)->SetDefaultRoute(sif[f].GetAddress(1),
                                                  si->GetInterfaceForDevice(access[2 * f]));
        Ptr<Ipv4> ri = receivers.Get(f)->GetObject<Ipv4>();
        srh.GetStaticRouting(ri)->SetDefaultRoute(
            rif[f].GetAddress(0),
            ri->GetInterfaceForDevice(access[2 * n + 2 * f + 1]));
    }

    std::vector<Ptr<BulkSender>> apps = InstallFlows(c, senders, receivers, rif, 5000);

    for (HopState& hs : g_hops)
    {
        ConnectSojournProbe(&hs.probe, hs.qdisc, hs.fwd);
        if (c.devicePull)
        {
            InstallDevicePull(&hs.pull, hs.fwd, hs.qdisc);
        }
    }
    Simulator::Schedule(NanoSeconds(c.measureStartNs), &WindowStart);
    Simulator::Schedule(NanoSeconds(c.measureEndNs), &WindowEnd);
    Simulator::Stop(NanoSeconds(c.durationNs));

    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t1 = std::chrono::steady_clock::now();
    double wall = std::chrono::duration<double>(t1 - t0).count();
    uint64_t events = Simulator::GetEventCount();

    // What ns-3 actually did.
    uint32_t otherQdiscs = 0;
    uint64_t otherDevDrops = 0;
    std::vector<Ptr<NetDevice>> others = access;
    for (HopState& hs : g_hops)
    {
        others.push_back(hs.rev);
    }
    for (Ptr<NetDevice> d : others)
    {
        if (d->GetNode()->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(d))
            ++otherQdiscs;
        otherDevDrops += DynamicCast<PointToPointNetDevice>(d)->GetQueue()->GetTotalDroppedPackets();
    }
    uint64_t hopPackets = 0;
    for (HopState& hs : g_hops)
    {
        hopPackets += Snap(hs.qdisc).sentPackets;
    }

    std::ofstream js(c.outJson);
    js << "{\n";
    js << "  \"ns3_version\": \"3.44\",\n";
    js << "  \"wall_s\": " << wall << ",\n";
    js << "  \"events\": " << events << ",\n";
    js << "  \"bottleneck_packets\": " << hopPackets << ",\n";
    js << "  \"hops\": [\n";
    for (size_t i = 0; i < nHops; ++i)
    {
        HopState& hs = g_hops[i];
        Ptr<TrafficControlLayer> tc = routers.Get(i)->GetObject<TrafficControlLayer>();
        Ptr<QueueDisc> root = tc->GetRootQueueDiscOnDevice(hs.fwd);
        js << "    {\"window\": ";
        WriteWindowJson(js, hs.start, hs.end);
        js << ", \"root_qdisc\": \""
           << JsonEscape(root ? root->GetInstanceTypeId().GetName() : "none") << "\""
           << ", \"device_queue_max\": \"" << hs.fwd->GetQueue()->GetMaxSize() << "\""
           << ", \"device_queue_drops\": " << hs.fwd->GetQueue()->GetTotalDroppedPackets()
           << ", \"sojourn_mismatch\": " << hs.probe.mismatch
           << ", \"device_pull_wakes\": " << hs.pull.wakes
           << ", \"device_pull_held\": " << hs.pull.held
           << ", \"data_rate_bps\": " << WireRate(c, c.hops[i].rateBps).GetBitRate() << "}"
           << (i + 1 < nHops ? "," : "") << "\n";
        WriteSojourn(c.outSojourn + "." + std::to_string(i + 1), hs.probe);
    }
    js << "  ],\n";
    js << "  \"checks\": {\"other_qdiscs\": " << otherQdiscs
       << ", \"access_device_drops\": " << otherDevDrops << "},\n";
    WriteFlowsJson(js, c, apps);
    js << "  ],\n  \"udp\": []\n}\n";
    js.close();

    Simulator::Destroy();
    return 0;
}

} // namespace

int
main(int argc, char* argv[])
{
    NS_ABORT_MSG_IF(argc != 2, "usage: dumbbell CONFIG");
    RunConfig c = ReadConfig(argv[1]);
    const size_t n = c.flows.size();
    NS_ABORT_MSG_IF(n == 0, "no flows");
    // Hosts: one sender/receiver pair per TCP flow, then one per UDP source.
    const size_t nh = n + c.udps.size();
    auto hostRttNs = [&](size_t i) {
        return i < n ? c.flows[i].rttNs : c.udps[i - n].rttNs;
    };

    RngSeedManager::SetSeed(c.seed);
    RngSeedManager::SetRun(1);

    SetTcpDefaults(c);
    if (!c.hops.empty())
    {
        return RunParkingLot(c);
    }

    NodeContainer routers;
    routers.Create(2);
    Ptr<Node> left = routers.Get(0);
    Ptr<Node> right = routers.Get(1);
    NodeContainer senders;
    senders.Create(nh);
    NodeContainer receivers;
    receivers.Create(nh);

    InternetStackHelper stack;
    stack.Install(routers);
    stack.Install(senders);
    stack.Install(receivers);
    SetCongestionControl(c, senders, receivers);

    std::string ample = std::to_string(c.ampleQueuePackets) + "p";
    PointToPointHelper p2p;
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue(ample));

    // Bottleneck.
    p2p.SetDeviceAttribute("DataRate", DataRateValue(WireRate(c, c.rateBps)));
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(c.bottleneckDelayNs)));
    NetDeviceContainer bdev = p2p.Install(left, right);
    Ptr<PointToPointNetDevice> bfwd = DynamicCast<PointToPointNetDevice>(bdev.Get(0));
    Ptr<PointToPointNetDevice> brev = DynamicCast<PointToPointNetDevice>(bdev.Get(1));
    brev->SetDataRate(WireRate(c, c.reverseRateBps));
    // The device queue under the queue disc holds one packet: the queue disc holds the
    // queue (ns-3's flow control stops the queue disc while the device queue is full).
    bfwd->GetQueue()->SetMaxSize(QueueSize("1p"));

    // Our queue disc first, so that address assignment does not install FQ-CoDel.
    TrafficControlHelper tch;
    Ptr<QueueDisc> aqm;
    if (c.shaperRateBps > 0)
    {
        // The shaper: a token bucket of `Rate` and `Burst` bytes (full at the start, as
        // ccsim's); no peak bucket, the 1-packet device queue at the link rate is the
        // peak. Its own limit is ample so that the child's limit decides drops.
        uint16_t root = tch.SetRootQueueDisc("ns3::TbfQueueDisc",
                                             "Rate",
                                             DataRateValue(DataRate(c.shaperRateBps)),
                                             "Burst",
                                             UintegerValue(c.shaperBurstBytes),
                                             "MaxSize",
                                             QueueSizeValue(QueueSize("100000p")));
        auto classes = tch.AddQueueDiscClasses(root, 1, "ns3::QueueDiscClass");
        tch.AddChildQueueDisc(root, classes[0], c.qdisc);
        g_qdisc = tch.Install(bfwd).Get(0);
        aqm = g_qdisc->GetQueueDiscClass(0)->GetQueueDisc();
    }
    else
    {
        tch.SetRootQueueDisc(c.qdisc);
        g_qdisc = tch.Install(bfwd).Get(0);
        aqm = g_qdisc;
    }
    ConfigureQueueDisc(c, aqm, c.qattrs);

    // Access links.
    NetDeviceContainer accessDevs;
    std::vector<Ptr<NetDevice>> sendDev(nh);
    std::vector<Ptr<NetDevice>> recvDev(nh);
    std::vector<Ptr<NetDevice>> leftDev(nh);
    std::vector<Ptr<NetDevice>> rightDev(nh);
    for (size_t i = 0; i < nh; ++i)
    {
        int64_t access = hostRttNs(i) / 2 - c.bottleneckDelayNs;
        NS_ABORT_MSG_IF(access < 0, "rtt below twice the bottleneck delay");
        p2p.SetDeviceAttribute("DataRate", DataRateValue(WireRate(c, c.accessRateBps)));
        p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(access)));
        NetDeviceContainer a = p2p.Install(senders.Get(i), left);
        p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(0)));
        NetDeviceContainer b = p2p.Install(right, receivers.Get(i));
        sendDev[i] = a.Get(0);
        leftDev[i] = a.Get(1);
        rightDev[i] = b.Get(0);
        recvDev[i] = b.Get(1);
    }

    // Addresses: senders' links in 10.1/16, receivers' in 10.2/16, bottleneck 10.3.0.0/30,
    // so that the routers need one aggregate route each.
    Ipv4AddressHelper addr;
    addr.SetBase("10.3.0.0", "255.255.255.252");
    Ipv4InterfaceContainer bif = addr.Assign(bdev);
    std::vector<Ipv4InterfaceContainer> sif(nh);
    std::vector<Ipv4InterfaceContainer> rif(nh);
    addr.SetBase("10.1.0.0", "255.255.255.252");
    for (size_t i = 0; i < nh; ++i)
    {
        NetDeviceContainer d(sendDev[i], leftDev[i]);
        sif[i] = addr.Assign(d);
        addr.NewNetwork();
    }
    addr.SetBase("10.2.0.0", "255.255.255.252");
    for (size_t i = 0; i < nh; ++i)
    {
        NetDeviceContainer d(rightDev[i], recvDev[i]);
        rif[i] = addr.Assign(d);
        addr.NewNetwork();
    }

    // No queue disc anywhere else (address assignment installs FQ-CoDel by default):
    // those links have ample device queues, as ccsim's ample DropTail.
    TrafficControlHelper none;
    none.Uninstall(brev);
    for (size_t i = 0; i < nh; ++i)
    {
        none.Uninstall(sendDev[i]);
        none.Uninstall(leftDev[i]);
        none.Uninstall(rightDev[i]);
        none.Uninstall(recvDev[i]);
    }

    // Static routes.
    Ipv4StaticRoutingHelper srh;
    Ptr<Ipv4StaticRouting> lr = srh.GetStaticRouting(left->GetObject<Ipv4>());
    lr->AddNetworkRouteTo(Ipv4Address("10.2.0.0"),
                          Ipv4Mask("255.255.0.0"),
                          bif.GetAddress(1),
                          left->GetObject<Ipv4>()->GetInterfaceForDevice(bfwd));
    Ptr<Ipv4StaticRouting> rr = srh.GetStaticRouting(right->GetObject<Ipv4>());
    rr->AddNetworkRouteTo(Ipv4Address("10.1.0.0"),
                          Ipv4Mask("255.255.0.0"),
                          bif.GetAddress(0),
                          right->GetObject<Ipv4>()->GetInterfaceForDevice(brev));
    for (size_t i = 0; i < nh; ++i)
    {
        Ptr<Ipv4> si = senders.Get(i)->GetObject<Ipv4>();
        srh.GetStaticRouting(si)->SetDefaultRoute(sif[i].GetAddress(1),
                                                  si->GetInterfaceForDevice(sendDev[i]));
        Ptr<Ipv4> ri = receivers.Get(i)->GetObject<Ipv4>();
        srh.GetStaticRouting(ri)->SetDefaultRoute(rif[i].GetAddress(0),
                                                  ri->GetInterfaceForDevice(recvDev[i]));
    }

    // Applications.
    const uint16_t port = 5000;
    std::vector<Ptr<BulkSender>> apps = InstallFlows(c, senders, receivers, rif, port);

    // Poisson UDP background sources (no congestion control; counted at their sinks).
    for (size_t k = 0; k < c.udps.size(); ++k)
    {
        size_t i = n + k;
        PacketSinkHelper sink("ns3::UdpSocketFactory",
                              InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sink.Install(receivers.Get(i));
        sa.Start(Seconds(0));
        g_udpSinks.push_back(DynamicCast<PacketSink>(sa.Get(0)));
        g_udpRx.emplace_back(0, 0);
        Ptr<PoissonSender> app = CreateObject<PoissonSender>();
        app->Setup(InetSocketAddress(rif[i].GetAddress(1), port),
                   c.udps[k].rateBps,
                   c.udps[k].wireBytes,
                   1000 + static_cast<int64_t>(k));
        senders.Get(i)->AddApplication(app);
        app->SetStartTime(NanoSeconds(c.udps[k].startNs));
    }

    // Measurement.
    ConnectSojournProbe(&g_bottleneckProbe, g_qdisc, bfwd);
    if (std::getenv("DUMBBELL_MARKS"))
    {
        g_qdisc->TraceConnectWithoutContext("Mark", MakeCallback(&OnQdiscMark));
    }
    if (c.devicePull)
    {
        InstallDevicePull(&g_bottleneckPull, bfwd, g_qdisc);
    }
    if (c.pieAccuLinux)
    {
        g_pie = DynamicCast<PieQueueDisc>(aqm);
        NS_ABORT_MSG_IF(!g_pie, "pie_accu_linux needs a PIE");
        aqm->TraceConnectWithoutContext("Mark", MakeCallback(&PieMarked));
    }
    if (c.fqTotalMinBytes)
    {
        NS_ABORT_MSG_IF(!DynamicCast<FqCoDelQueueDisc>(aqm),
                        "fqcodel_total_min_bytes needs an FQ-CoDel");
        g_fqTotal.fq = aqm;
        g_fqTotal.minBytes = c.fqTotalMinBytes;
        BooleanValue ecn;
        aqm->GetAttribute("UseEcn", ecn);
        g_fqTotal.ecn = ecn.Get();
        aqm->TraceConnectWithoutContext("Enqueue", MakeCallback(&FqEnqueued));
    }
    Simulator::Schedule(NanoSeconds(c.measureStartNs), &WindowStart);
    Simulator::Schedule(NanoSeconds(c.measureEndNs), &WindowEnd);
    Simulator::Stop(NanoSeconds(c.durationNs));

    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t1 = std::chrono::steady_clock::now();
    double wall = std::chrono::duration<double>(t1 - t0).count();
    uint64_t events = Simulator::GetEventCount();

    // What ns-3 actually did.
    QSnap total = Snap(g_qdisc);
    Ptr<TrafficControlLayer> ltc = left->GetObject<TrafficControlLayer>();
    std::string rootType = ltc->GetRootQueueDiscOnDevice(bfwd)
                               ? ltc->GetRootQueueDiscOnDevice(bfwd)->GetInstanceTypeId().GetName()
                               : "none";
    uint32_t otherQdiscs = 0;
    auto countQdisc = [&](Ptr<NetDevice> d) {
        if (d->GetNode()->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(d))
            ++otherQdiscs;
    };
    countQdisc(brev);
    for (size_t i = 0; i < nh; ++i)
    {
        countQdisc(sendDev[i]);
        countQdisc(leftDev[i]);
        countQdisc(rightDev[i]);
        countQdisc(recvDev[i]);
    }
    Ptr<Queue<Packet>> devq = bfwd->GetQueue();
    uint64_t accessDevDrops = 0;
    for (size_t i = 0; i < nh; ++i)
    {
        for (auto d : {sendDev[i], leftDev[i], rightDev[i], recvDev[i]})
            accessDevDrops +=
                DynamicCast<PointToPointNetDevice>(d)->GetQueue()->GetTotalDroppedPackets();
    }
    accessDevDrops += brev->GetQueue()->GetTotalDroppedPackets();
    std::ofstream js(c.outJson);
    js << "{\n";
    js << "  \"ns3_version\": \"3.44\",\n";
    js << "  \"wall_s\": " << wall << ",\n";
    js << "  \"events\": " << events << ",\n";
    js << "  \"bottleneck_packets\": " << total.sentPackets << ",\n";
    js << "  \"window\": ";
    WriteWindowJson(js, g_qStart, g_qEnd);
    js << ",\n";
    js << "  \"checks\": {\"root_qdisc\": \"" << JsonEscape(rootType) << "\""
       << ", \"child_qdisc\": \""
       << (g_qdisc->GetNQueueDiscClasses() > 0
               ? JsonEscape(g_qdisc->GetQueueDiscClass(0)->GetQueueDisc()->GetInstanceTypeId().GetName())
               : std::string())
       << "\""
       << ", \"other_qdiscs\": " << otherQdiscs
       << ", \"device_queue_max\": \"" << devq->GetMaxSize() << "\""
       << ", \"device_queue_drops\": " << devq->GetTotalDroppedPackets()
       << ", \"access_device_drops\": " << accessDevDrops
       << ", \"sojourn_mismatch\": " << g_bottleneckProbe.mismatch
       << ", \"device_pull_wakes\": " << g_bottleneckPull.wakes
       << ", \"device_pull_held\": " << g_bottleneckPull.held
       << ", \"fqcodel_total_updates\": " << g_fqTotal.updates
       << ", \"pie_accu_clears\": " << g_pieAccuClears
       << ", \"ece_latch_cleared\": " << g_eceLatchCleared
       << ", \"cwr_quick_acks\": " << g_cwrQuickAcks
       << ", \"bottleneck_data_rate_bps\": " << WireRate(c, c.rateBps).GetBitRate()
       << "},\n";
    WriteFlowsJson(js, c, apps);
    js << "  ],\n  \"udp\": [";
    for (size_t k = 0; k < g_udpSinks.size(); ++k)
    {
        js << (k ? ", " : "") << "{\"rx_start\": " << g_udpRx[k].first
           << ", \"rx_end\": " << g_udpRx[k].second << "}";
    }
    js << "]\n}\n";
    js.close();

    WriteSojourn(c.outSojourn, g_bottleneckProbe);

    Simulator::Destroy();
    return 0;
}
