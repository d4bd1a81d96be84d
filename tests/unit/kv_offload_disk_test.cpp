// The KV offload's disk tier on its own: records round-trip through both I/O paths; a write
// that fails (a full disk) or comes out short keeps nothing; records of another model, key or
// token run are refused; the tier stays within its capacity, least recently used out first.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <numeric>

#include "core/error.h"
#include "kv/offload_disk_tier.h"
#include "kv/offload_record.h"

namespace hadron {
namespace {

constexpr size_t kBlockBytes = 5000;  // not a multiple of the 4 KiB alignment
constexpr size_t kSlotBytes = round_up_to(kBlockBytes, kRecordAlign);
constexpr int64_t kBlockSize = 4;
constexpr uint64_t kFingerprint = 0x1234;

// What a failing disk does: writes end in ENOSPC, or stop halfway.
class FaultyIo final : public DiskIo {
 public:
  enum class Mode { kNone, kNoSpace, kShortWrite };
  explicit FaultyIo(Mode* mode) : mode_(mode), io_(make_disk_io(DiskIoKind::kPosix)) {}
  const char* name() const override { return "faulty"; }
  void run(std::span<DiskOp> ops) override {
    io_->run(ops);
    for (DiskOp& op : ops) {
      if (!op.write || *mode_ == Mode::kNone) continue;
      op.result = *mode_ == Mode::kNoSpace ? -ENOSPC : op.result / 2;
    }
  }

 private:
  Mode* mode_;
  std::unique_ptr<DiskIo> io_;
};

struct Slot {
  Slot() : data(static_cast<std::byte*>(std::aligned_alloc(kRecordAlign, kSlotBytes))) {
    std::memset(data, 0, kSlotBytes);
  }
  ~Slot() { std::free(data); }
  std::byte* data;
};

std::string parent() {
  const std::string dir = ::testing::TempDir() + "hadron-kv-disk-test";
  std::filesystem::create_directories(dir);
  return dir;
}

DiskTier make_tier(std::unique_ptr<DiskIo> io, int64_t n_records = 8) {
  return DiskTier(parent(), n_records * (kSlotBytes + record_header_bytes(kBlockSize)), kBlockBytes,
                  kSlotBytes, kBlockSize, kFingerprint, std::move(io));
}

size_t n_files(const DiskTier& tier) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& file : std::filesystem::directory_iterator(tier.folder())) ++n;
  return n;
}

class DiskTierIo : public ::testing::TestWithParam<DiskIoKind> {};

TEST_P(DiskTierIo, RecordsRoundTrip) {
  DiskTier tier = make_tier(make_disk_io(GetParam()));
  Slot out, in;
  for (size_t i = 0; i < kBlockBytes; ++i) out.data[i] = static_cast<std::byte>(i * 7 + 1);
  const std::vector<int32_t> tokens = {5, 6, 7, 8};
  tier.store(std::vector<DiskTier::Block>{{42, tokens, out.data}});
  EXPECT_TRUE(tier.contains(42, tokens));
  EXPECT_FALSE(tier.contains(42, std::vector<int32_t>{5, 6, 7, 9}));
  EXPECT_EQ(tier.read(std::vector<DiskTier::Block>{{42, tokens, in.data}}),
            std::vector<bool>{true});
  EXPECT_EQ(std::memcmp(in.data, out.data, kBlockBytes), 0);
  EXPECT_EQ(tier.stats().hit_blocks, 1);
  EXPECT_EQ(n_files(tier), 1u);
}

// A real refusal by the kernel: with RLIMIT_FSIZE below a record's size every write stops
// short or fails (EFBIG), as on a full disk; nothing is kept, and writes work again after.
TEST_P(DiskTierIo, WritesRefusedByTheKernelKeepNothing) {
  DiskTier tier = make_tier(make_disk_io(GetParam()));
  Slot slot;
  const std::vector<int32_t> tokens = {1, 2, 3, 4};
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = kRecordAlign;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  tier.store(std::vector<DiskTier::Block>{{3, tokens, slot.data}});
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_FALSE(tier.contains(3, tokens));
  EXPECT_EQ(tier.stats().dropped_blocks, 1);
  EXPECT_EQ(n_files(tier), 0u);
  tier.store(std::vector<DiskTier::Block>{{3, tokens, slot.data}});
  EXPECT_TRUE(tier.contains(3, tokens));
}

INSTANTIATE_TEST_SUITE_P(Io, DiskTierIo, ::testing::Values(DiskIoKind::kAuto, DiskIoKind::kPosix),
                         [](const auto& info) {
                           return info.param == DiskIoKind::kPosix ? "pread" : "io_uring";
                         });

TEST(DiskTier, FailedWritesKeepNothing) {
  for (const auto mode : {FaultyIo::Mode::kNoSpace, FaultyIo::Mode::kShortWrite}) {
    FaultyIo::Mode current = mode;
    DiskTier tier = make_tier(std::make_unique<FaultyIo>(&current));
    Slot slot;
    const std::vector<int32_t> tokens = {1, 2, 3, 4};
    tier.store(std::vector<DiskTier::Block>{{7, tokens, slot.data}});
    EXPECT_FALSE(tier.contains(7, tokens));
    EXPECT_EQ(tier.stats().dropped_blocks, 1);
    EXPECT_EQ(n_files(tier), 0u);     // the partial file is gone
    current = FaultyIo::Mode::kNone;  // the disk has room again
    tier.store(std::vector<DiskTier::Block>{{7, tokens, slot.data}});
    EXPECT_TRUE(tier.contains(7, tokens));
  }
}

TEST(DiskTier, EvictsLeastRecentlyUsedButNotPinned) {
  DiskTier tier = make_tier(make_disk_io(DiskIoKind::kAuto), 3);
  Slot slot;
  const std::vector<int32_t> tokens = {1, 2, 3, 4};
  auto store = [&](uint64_t key) {
    tier.store(std::vector<DiskTier::Block>{{key, tokens, slot.data}});
  };
  store(1), store(2), store(3);
  tier.pin(1);
  store(4);  // evicts 2, the oldest unpinned
  EXPECT_TRUE(tier.contains(1, tokens));
  EXPECT_FALSE(tier.contains(2, tokens));
  tier.unpin(1);
  store(5);  // now 1 goes
  EXPECT_FALSE(tier.contains(1, tokens));
  EXPECT_EQ(tier.stats().blocks, 3);
  EXPECT_EQ(n_files(tier), 3u);
}

TEST(DiskTier, RefusesAFolderThatIsNotOne) {
  EXPECT_THROW(DiskTier("/nonexistent/hadron", 1 << 20, kBlockBytes, kSlotBytes, kBlockSize,
                        kFingerprint, make_disk_io(DiskIoKind::kPosix)),
               InputError);
}

TEST(OffloadRecord, RefusesAnotherModelKeyOrTokens) {
  std::vector<std::byte> payload(100);
  std::iota(reinterpret_cast<uint8_t*>(payload.data()),
            reinterpret_cast<uint8_t*>(payload.data()) + payload.size(), 0);
  const std::vector<int32_t> tokens = {1, 2, 3, 4};
  std::vector<std::byte> header(record_header_bytes(4));
  write_record_header(header, 9, kFingerprint, tokens, payload);
  EXPECT_EQ(check_record(header, payload, 9, kFingerprint, tokens), "");
  EXPECT_NE(check_record(header, payload, 9, kFingerprint + 1, tokens), "");
  EXPECT_NE(check_record(header, payload, 8, kFingerprint, tokens), "");
  EXPECT_NE(check_record(header, payload, 9, kFingerprint, std::vector<int32_t>{1, 2, 3, 5}), "");
  payload[50] ^= std::byte{1};
  EXPECT_EQ(check_record(header, payload, 9, kFingerprint, tokens), "payload checksum mismatch");
}

}  // namespace
}  // namespace hadron
