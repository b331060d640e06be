// autosched-vectorize-copies: the copies left on buffers after
// bufferization (linalg.copy, and linalg.transpose that keeps the innermost
// dim innermost: the copy a B pack lowers to, [k][n/vn][vn] to
// [n/vn][k][vn]) as loops over the outer dims, each step one whole-vector
// load and store of a row, instead of convert-linalg-to-loops' scalar loop
// (which LLVM leaves scalar: it cannot tell the two buffers apart).
//
// Only static shapes whose innermost dim has unit stride in both buffers,
// of whole-byte integers or floats;
// a row longer than 256 elements is cut into equal pieces of at most 256
// (left as it is where none divides it).
//
// A linalg.transpose that swaps the last two dims (the pack of a B stored
// N x K, [n/vn][vn][k] to [n/vn][k][vn]) of 32-bit elements whose last two
// dims are multiples of 16: loops over 16x16 blocks, each read as 16 rows,
// transposed in registers (vector.transpose lowered to MLIR's 16x16 shuffle
// sequence, 64 shuffles a block) and written as 16 rows, instead of a
// scalar loop moving one element at a time.
//
// Anything else is left to convert-linalg-to-loops, as before. A copy moves
// the same values in any order: results are bit for bit the same.

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorTransforms.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace {

// Whether t is static with a unit-stride innermost dim.
static bool unitInner(MemRefType t) {
  if (!t || !t.hasStaticShape() || t.getRank() < 1)
    return false;
  SmallVector<int64_t> strides;
  int64_t off;
  if (failed(t.getStridesAndOffset(strides, off)))
    return false;
  return strides.back() == 1;
}

// The piece of a row of n elements one load moves: n itself up to 256,
// else the largest power of two from 256 down to 16 that divides n; 0:
// none.
static int64_t rowPiece(int64_t n) {
  if (n <= 256)
    return n;
  for (int64_t c = 256; c >= 16; c /= 2)
    if (n % c == 0)
      return c;
  return 0;
}

struct VectorizeCopiesPass
    : PassWrapper<VectorizeCopiesPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VectorizeCopiesPass)

  StringRef getArgument() const final { return "autosched-vectorize-copies"; }
  StringRef getDescription() const final {
    return "linalg.copy and row-keeping linalg.transpose on buffers as "
           "loops of whole-row vector loads and stores";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, memref::MemRefDialect,
                    scf::SCFDialect, vector::VectorDialect>();
  }

  // Loops from 0 over the first step.size() dims of shape, each by its
  // step, body at their innermost.
  static void loopNest(
      OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
      ArrayRef<int64_t> step,
      function_ref<void(OpBuilder &, Location, ValueRange)> body) {
    SmallVector<Value> lbs, ubs, steps;
    for (size_t k = 0; k < step.size(); k++) {
      lbs.push_back(arith::ConstantIndexOp::create(b, loc, 0));
      ubs.push_back(arith::ConstantIndexOp::create(b, loc, shape[k]));
      steps.push_back(arith::ConstantIndexOp::create(b, loc, step[k]));
    }
    scf::buildLoopNest(b, loc, lbs, ubs, steps, body);
  }

  // The 16x16 block a transpose of the last two dims moves at once.
  static constexpr int64_t kBlock = 16;

  // op, a linalg.transpose on buffers swapping the last two dims of 32-bit
  // elements, both multiples of kBlock, rewritten as loops over blocks;
  // the block transposes made are added to *made. false: left as it is.
  static bool rewriteSwap(linalg::TransposeOp op,
                          SmallVectorImpl<Operation *> *made) {
    if (!op.hasPureBufferSemantics())
      return false;
    Value src = op.getInput(), dst = op.getInit();
    auto st = dyn_cast<MemRefType>(src.getType());
    auto dt = dyn_cast<MemRefType>(dst.getType());
    if (!unitInner(st) || !unitInner(dt) || st.getRank() < 2)
      return false;
    Type et = st.getElementType();
    int64_t r = st.getRank();
    ArrayRef<int64_t> perm = op.getPermutation();
    for (int64_t k = 0; k < r - 2; k++)
      if (perm[k] != k)
        return false;
    if (perm[r - 2] != r - 1 || perm[r - 1] != r - 2 ||
        !et.isIntOrFloat() || et.getIntOrFloatBitWidth() != 32 ||
        st.getShape()[r - 2] % kBlock != 0 ||
        st.getShape()[r - 1] % kBlock != 0)
      return false;
    OpBuilder b(op);
    Location loc = op.getLoc();
    SmallVector<int64_t> step(r, 1);
    step[r - 2] = step[r - 1] = kBlock;
    auto vt = VectorType::get({kBlock, kBlock}, et);
    auto body = [&](OpBuilder &nb, Location l, ValueRange iv) {
      SmallVector<Value> idx(iv.begin(), iv.end()), at(idx);
      std::swap(at[r - 2], at[r - 1]);
      Value pad = arith::ConstantOp::create(nb, l, nb.getZeroAttr(et));
      SmallVector<bool> inb(2, true);
      Value v = vector::TransferReadOp::create(nb, l, vt, src, idx, pad,
                                               ArrayRef<bool>(inb));
      auto t = vector::TransposeOp::create(nb, l, v, ArrayRef<int64_t>{1, 0});
      made->push_back(t);
      vector::TransferWriteOp::create(nb, l, t, dst, at, ArrayRef<bool>(inb));
    };
    loopNest(b, loc, st.getShape(), step, body);
    op->erase();
    return true;
  }

  // op (a copy or transpose on buffers) rewritten; false: left as it is.
  static bool rewrite(linalg::LinalgOp op) {
    if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 ||
        op.getNumDpsInits() != 1)
      return false;
    Value src = op.getDpsInputOperand(0)->get();
    Value dst = op.getDpsInitOperand(0)->get();
    auto st = dyn_cast<MemRefType>(src.getType());
    auto dt = dyn_cast<MemRefType>(dst.getType());
    // Whole bytes only: a vector of i1 (or i4) is packed in memory where
    // a buffer of them holds a byte each.
    Type et = dt.getElementType();
    if (!unitInner(st) || !unitInner(dt) || st.getRank() != dt.getRank() ||
        st.getElementType() != et || !et.isIntOrFloat() ||
        et.getIntOrFloatBitWidth() % 8 != 0)
      return false;
    int64_t r = dt.getRank();
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, r));
    if (auto t = dyn_cast<linalg::TransposeOp>(op.getOperation()))
      perm = llvm::to_vector(t.getPermutation());
    if (perm[r - 1] != r - 1)
      return false;
    int64_t n = dt.getShape()[r - 1], piece = rowPiece(n);
    if (piece < 1)
      return false;
    OpBuilder b(op);
    Location loc = op.getLoc();
    // Loops over src's outer dims in order (a cold source streams in; the
    // stores land in the destination, a pack's small buffer), and its
    // innermost by the piece where a row takes more than one.
    bool cut = piece < n;
    SmallVector<int64_t> step(cut ? r : r - 1, 1);
    if (cut)
      step[r - 1] = piece;
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    auto vt = VectorType::get({piece}, dt.getElementType());
    // dst[at] = src[idx], at[k] = idx[perm[k]].
    auto body = [&](OpBuilder &nb, Location l, ValueRange iv) {
      SmallVector<Value> idx(iv.begin(), iv.end()), at(r);
      if (!cut)
        idx.push_back(zero);
      for (int64_t k = 0; k < r; k++)
        at[k] = idx[perm[k]];
      Value v = vector::LoadOp::create(nb, l, vt, src, idx);
      vector::StoreOp::create(nb, l, v, dst, at);
    };
    loopNest(b, loc, st.getShape(), step, body);
    op->erase();
    return true;
  }

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<linalg::CopyOp, linalg::TransposeOp>(op))
        ops.push_back(cast<linalg::LinalgOp>(op));
    });
    SmallVector<Operation *> made;
    for (linalg::LinalgOp op : ops) {
      auto t = dyn_cast<linalg::TransposeOp>(op.getOperation());
      if (!(t && rewriteSwap(t, &made)))
        rewrite(op);
    }
    // The block transposes as shuffles of whole rows (not one extract
    // and insert per element, the default lowering).
    if (!made.empty()) {
      RewritePatternSet patterns(&getContext());
      vector::populateVectorTransposeLoweringPatterns(
          patterns, vector::VectorTransposeLowering::Shuffle16x16);
      if (failed(applyOpPatternsGreedily(made, std::move(patterns))))
        signalPassFailure();
    }
  }
};

} // namespace

void autoschedRegisterVectorizeCopiesPass() {
  PassRegistration<VectorizeCopiesPass>();
}
