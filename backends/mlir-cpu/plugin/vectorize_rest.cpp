// autosched-vectorize-rest{threads=N vector-bits=B}: the linalg ops a build
// has no schedule for (elementwise generics, reductions, transposes,
// broadcasts, fills), run after bufferization on memrefs, become vector code
// split across N threads, instead of convert-linalg-to-loops' scalar loops.
//
// For each linalg op at the top of a function (not inside a loop: the
// schedules' own code is left alone; but for the tiles of
// autosched-fuse-rows, vectorized where they are) with static loop ranges:
// - threads: when there are N > 1 of them and the op does enough work
//   (kMinWorkPerThread a thread, else fewer threads), its outermost
//   parallel dim with at least that many iterations (not the innermost) is
//   cut into as many chunks, an scf.forall (then scf.parallel, then OpenMP,
//   as the matmul schedules are);
// - vectors: every dim but the innermost is tiled by 1 (scf.for), the
//   innermost by at most kMaxVectors registers of B bits (whole vectors
//   that divide it where some do, else a last tile vectorized with masks),
//   and the tile is vectorized
//   (linalg::vectorize), then lowered by upstream vector patterns to 1-D
//   vectors the pipeline's later passes take to LLVM.
// An op it cannot vectorize (dynamic shapes, a gather in its body, an
// operand of i1 or another type narrower than a byte, an op the vectorizer
// refuses) is left as it is, for convert-linalg-to-loops: never an error. Reductions keep their order (no reassociation), so a
// result is the same as the loops' up to the math functions; a row
// reduction (the innermost dim reduced, a softmax's sum) whose rows and
// row length divide the lanes is tiled lanes x lanes with the rows in the
// lanes, so that its sums are vector adds, each row's in its order.

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace {

// The innermost tile holds at most this many registers of each operand.
constexpr int64_t kMaxVectors = 16;
// Each thread gets at least this many iterations, else the op is split
// across fewer threads (down to one): a parallel region costs some
// microseconds, more when the CPUs are shared, and a vectorized elementwise
// op does a few thousand iterations a microsecond.
constexpr int64_t kMinWorkPerThread = 1 << 15;

// The widest element of op's operands, in bits (f32: 32).
static unsigned widestElement(linalg::LinalgOp op) {
  unsigned w = 8;
  for (OpOperand &o : op->getOpOperands()) {
    Type t = getElementTypeOrSelf(o.get().getType());
    if (t.isIntOrIndexOrFloat() && !t.isIndex())
      w = std::max(w, t.getIntOrFloatBitWidth());
  }
  return w;
}

// A copy through an affine window, as a conv's im2col reads its input
// (in[n][y * s + i][x * s + j][c]): one input yielded as it is, every loop
// parallel, the output written in loop order. The vectorizer refuses its
// input map; a tile of it with the unit dims dropped is a plain copy.
static bool isWindowCopy(linalg::LinalgOp op) {
  auto g = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g.getNumParallelLoops() != g.getNumLoops() ||
      !g.getMatchingIndexingMap(g.getDpsInitOperand(0)).isIdentity())
    return false;
  Block &b = g.getRegion().front();
  auto y = dyn_cast<linalg::YieldOp>(b.getTerminator());
  return b.getOperations().size() == 1 && y && y.getNumOperands() == 1 &&
         y.getOperand(0) == b.getArgument(0);
}

// A tile autosched-fuse-rows made (plugin/fuse_rows.cpp): inside the rows'
// loop, which already runs on the threads.
static bool rowsTile(linalg::LinalgOp op) {
  return op->hasAttr("autosched.rows_tile");
}

// Whether op is one this pass takes: on memrefs, static loop ranges, at the
// top of its function (or a rows tile), and accepted by the vectorizer (or
// a window copy, whose rows are).
static bool candidate(linalg::LinalgOp op, SmallVector<int64_t> &ranges) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 ||
      (!isa<func::FuncOp>(op->getParentOp()) && !rowsTile(op)))
    return false;
  ranges = op.getStaticLoopRanges();
  for (int64_t r : ranges)
    if (ShapedType::isDynamic(r) || r < 1)
      return false;
  // Whole bytes only: a buffer of i1 (or i4) holds an element a byte, a
  // vector of them is packed in memory, so a vector load or store of one
  // reads or writes the wrong bytes (the DeepSeek decode step's masks:
  // results that changed from call to call, from memory the stores left
  // unwritten).
  for (OpOperand &o : op->getOpOperands()) {
    Type t = getElementTypeOrSelf(o.get().getType());
    if (t.isIntOrFloat() && t.getIntOrFloatBitWidth() % 8 != 0)
      return false;
  }
  // llvm.intr.powi takes a scalar exponent: on vectors, fpowi is expanded
  // into multiplications (lowerVectors), which needs a constant one.
  bool powi = false;
  op->walk([&](math::FPowIOp p) {
    powi |= !matchPattern(p.getRhs(), m_Constant());
  });
  return !powi && (succeeded(linalg::vectorizeOpPrecondition(op)) ||
                   isWindowCopy(op));
}

// The loop dim an input of op is contiguous along when that is not the
// innermost loop dim, which the input also reads along (a transpose, not
// a broadcast), or -1.
static int64_t transposedDim(linalg::LinalgOp op) {
  int64_t inner = op.getNumLoops() - 1;
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap m = op.getMatchingIndexingMap(in);
    if (m.getNumResults() < 2 || !m.isProjectedPermutation())
      continue;
    auto last = dyn_cast<AffineDimExpr>(m.getResults().back());
    if (last && last.getPosition() != inner &&
        m.isFunctionOfDim(inner))
      return last.getPosition();
  }
  return -1;
}

// Whether op's reduction combines in any order to the same bits: its body
// yields a max or min (IEEE maximum/minimum, which order -0 below +0;
// integer max/min) of an argument and the accumulator. (Not maxnum/minnum,
// which may return either zero of -0 and +0; not a sum: an f32 sum
// reassociated rounds differently.)
static bool orderFree(linalg::LinalgOp op) {
  Block *b = op.getBlock();
  auto y = dyn_cast<linalg::YieldOp>(b->getTerminator());
  if (!y || y->getNumOperands() != 1)
    return false;
  Operation *c = y->getOperand(0).getDefiningOp();
  if (!c || c->getBlock() != b || c->getNumOperands() != 2 ||
      !isa<arith::MaximumFOp, arith::MinimumFOp, arith::MaxSIOp,
           arith::MinSIOp, arith::MaxUIOp, arith::MinUIOp>(c))
    return false;
  Value acc = b->getArguments().back();
  return c->getOperand(0) == acc || c->getOperand(1) == acc;
}

// Whether op reduces its innermost loop dim alone, the dim before it
// parallel, in an order that changes its result: a row reduction (a
// softmax's sum, a layer norm's mean). Vectorized along its rows
// (rowReduction tiles below) it keeps each row's order of operations, and
// so its result bit for bit. (A max or min is vectorized along the row,
// a vector of lanes a step and one reduction of it at the end: no
// transposes, and the same bits.)
static bool isRowReduction(linalg::LinalgOp op) {
  int64_t rank = op.getNumLoops();
  if (rank < 2 || op.getNumReductionLoops() != 1 ||
      op.getNumDpsInits() != 1 || orderFree(op))
    return false;
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  return iters[rank - 1] == utils::IteratorType::reduction &&
         iters[rank - 2] == utils::IteratorType::parallel;
}

// The dim to split across threads, or -1, and *n the chunks: as many as
// threads, fewer if each would have less than kMinWorkPerThread
// iterations; the outermost parallel dim (not the innermost dim) with at
// least *n iterations.
static int64_t threadDim(linalg::LinalgOp op, ArrayRef<int64_t> ranges,
                         int64_t threads, int64_t *n) {
  int64_t work = 1;
  for (int64_t r : ranges)
    work *= r;
  *n = std::min(threads, work / kMinWorkPerThread);
  if (*n < 2)
    return -1;
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  for (int64_t d = 0; d + 1 < (int64_t)ranges.size(); d++)
    if (iters[d] == utils::IteratorType::parallel && ranges[d] >= *n)
      return d;
  return -1;
}

struct VectorizeRestPass
    : PassWrapper<VectorizeRestPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VectorizeRestPass)

  VectorizeRestPass() = default;
  VectorizeRestPass(const VectorizeRestPass &other) : PassWrapper(other) {}

  Option<int64_t> threads{*this, "threads",
                          llvm::cl::desc("threads to split an op across"),
                          llvm::cl::init(1)};
  Option<int64_t> vectorBits{*this, "vector-bits",
                             llvm::cl::desc("bits of a vector register"),
                             llvm::cl::init(256)};

  StringRef getArgument() const final { return "autosched-vectorize-rest"; }
  StringRef getDescription() const final {
    return "linalg ops on memrefs left by the schedules: threads (scf.forall) "
           "and vectors (linalg::vectorize); what fails is left as it is";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<affine::AffineDialect, arith::ArithDialect,
                    memref::MemRefDialect, scf::SCFDialect,
                    vector::VectorDialect>();
  }

  // Split op's dim d into `chunks` chunks; the op inside, or op itself
  // when tiling fails.
  linalg::LinalgOp splitThreads(IRRewriter &rw, linalg::LinalgOp op,
                                int64_t d, int64_t chunks) {
    SmallVector<OpFoldResult> n(op.getNumLoops(), rw.getIndexAttr(0));
    n[d] = rw.getIndexAttr(chunks);
    scf::SCFTilingOptions o;
    o.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
    o.setNumThreads(n);
    rw.setInsertionPoint(op);
    FailureOr<scf::SCFTilingResult> r =
        scf::tileUsingSCF(rw, cast<TilingInterface>(op.getOperation()), o);
    if (failed(r) || r->tiledOps.size() != 1)
      return op;
    rw.eraseOp(op);
    return cast<linalg::LinalgOp>(r->tiledOps.front());
  }

  // A window copy's tile (every loop dim but the innermost of 1 iteration)
  // as the linalg.copy of its innermost row: both operands viewed as 1-D
  // (rank-reducing subviews), so the input map's y * s + i is gone and the
  // copy vectorizes. vsizes keeps the innermost size. Failure leaves tile
  // as it was.
  LogicalResult flattenWindowTile(IRRewriter &rw, linalg::LinalgOp &tile,
                                  SmallVector<int64_t> &vsizes) {
    SmallVector<int64_t> r = tile.getStaticLoopRanges();
    int64_t inner = r.back();
    for (size_t d = 0; d + 1 < r.size(); d++)
      if (r[d] != 1)
        return failure();
    // The input's last index must be the innermost loop dim alone.
    AffineMap m = tile.getMatchingIndexingMap(tile.getDpsInputOperand(0));
    auto last = dyn_cast<AffineDimExpr>(m.getResults().back());
    if (!last || last.getPosition() != r.size() - 1)
      return failure();
    for (Value v : {tile.getDpsInputOperand(0)->get(),
                    tile.getDpsInitOperand(0)->get()}) {
      auto t = dyn_cast<MemRefType>(v.getType());
      if (!t || !t.hasStaticShape() || ShapedType::isDynamic(inner) ||
          t.getDimSize(t.getRank() - 1) != inner ||
          t.getNumElements() != inner)
        return failure();
    }
    Location loc = tile.getLoc();
    SmallVector<Value> rows;
    rw.setInsertionPoint(tile);
    for (Value v : {tile.getDpsInputOperand(0)->get(),
                    tile.getDpsInitOperand(0)->get()}) {
      auto t = cast<MemRefType>(v.getType());
      int64_t rank = t.getRank();
      SmallVector<OpFoldResult> offs(rank, rw.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes(rank, rw.getIndexAttr(1));
      SmallVector<OpFoldResult> strides(rank, rw.getIndexAttr(1));
      sizes[rank - 1] = rw.getIndexAttr(inner);
      MemRefType rt = memref::SubViewOp::inferRankReducedResultType(
          {inner}, t, offs, sizes, strides);
      rows.push_back(
          memref::SubViewOp::create(rw, loc, rt, v, offs, sizes, strides));
    }
    auto copy = linalg::CopyOp::create(rw, loc, rows[0], rows[1]);
    rw.eraseOp(tile);
    tile = cast<linalg::LinalgOp>(copy.getOperation());
    vsizes = {vsizes.back()};
    return success();
  }

  // The tile sizes for op (0: no loop) and the vector sizes of a tile:
  // true when the tile is a row reduction's lanes x lanes (rowLanes after).
  bool chooseTiles(IRRewriter &rw, linalg::LinalgOp op,
                   ArrayRef<int64_t> ranges, SmallVector<OpFoldResult> &sizes,
                   SmallVector<int64_t> &vsizes) {
    int64_t rank = op.getNumLoops();
    int64_t lanes = std::max<int64_t>(1, vectorBits / widestElement(op));
    int64_t cap = lanes * kMaxVectors;
    int64_t inner = ranges[rank - 1];
    sizes.assign(rank, rw.getIndexAttr(1));
    vsizes.assign(rank, 1);
    // Dims of one iteration need no loop.
    for (int64_t d = 0; d + 1 < rank; d++)
      if (ranges[d] == 1)
        sizes[d] = rw.getIndexAttr(0);
    // The innermost tile: the whole dim when it fits, else the widest
    // whole number of vectors that divides it (no masks: 384 by 192), else
    // cap (the last tile masked).
    int64_t step = inner <= cap ? 0 : cap;
    if (inner > cap && inner % lanes == 0) {
      for (step = cap; step > lanes && inner % step != 0; step -= lanes)
        ;
    }
    sizes[rank - 1] = rw.getIndexAttr(step);
    vsizes[rank - 1] = step == 0 ? inner : step;
    // A transposed read: lanes x lanes tiles (rows read whole, transposed
    // in registers) instead of a column of scalars, when both dims divide.
    int64_t t = transposedDim(op);
    SmallVector<int64_t> raw = op.getStaticLoopRanges();
    if (t >= 0 && raw[t] % lanes == 0 && raw[rank - 1] % lanes == 0) {
      sizes[t] = sizes[rank - 1] = rw.getIndexAttr(lanes);
      vsizes[rank - 1] = lanes;
    }
    // A row reduction: lanes rows x lanes columns a tile, the rows in the
    // vector lanes (rowLanes), when both dims divide; each row's sum is
    // then a chain of vector adds in the loops' order, where along the row
    // it is a chain of scalar adds (an f32 sum is not reassociated).
    if (isRowReduction(op) && !ShapedType::isDynamic(raw[rank - 2]) &&
        !ShapedType::isDynamic(raw[rank - 1]) &&
        raw[rank - 2] % lanes == 0 && raw[rank - 1] % lanes == 0) {
      sizes[rank - 2] = sizes[rank - 1] = rw.getIndexAttr(lanes);
      vsizes[rank - 2] = vsizes[rank - 1] = lanes;
      return true;
    }
    return false;
  }

  // Tile op to one vector tile per scf.for iteration and vectorize the
  // tile; op is left as it is when either fails.
  void vectorizeTiles(IRRewriter &rw, linalg::LinalgOp op,
                      ArrayRef<int64_t> ranges) {
    SmallVector<OpFoldResult> sizes;
    SmallVector<int64_t> vsizes;
    bool rows = chooseTiles(rw, op, ranges, sizes, vsizes);
    linalg::LinalgOp tile = op;
    bool tiled = false;
    for (OpFoldResult s : sizes)
      tiled |= getConstantIntValue(s) != 0;
    if (tiled) {
      scf::SCFTilingOptions o;
      o.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
      o.setTileSizes(sizes);
      rw.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> r =
          scf::tileUsingSCF(rw, cast<TilingInterface>(op.getOperation()), o);
      if (failed(r) || r->tiledOps.size() != 1)
        return;
      rw.eraseOp(op);
      tile = cast<linalg::LinalgOp>(r->tiledOps.front());
    }
    if (isWindowCopy(tile) &&
        failed(linalg::vectorizeOpPrecondition(tile)) &&
        failed(flattenWindowTile(rw, tile, vsizes)))
      return;
    int64_t rank = tile.getNumLoops();
    // A tile of static shape needs no vector sizes (no masks).
    SmallVector<int64_t> tileRanges = tile.getStaticLoopRanges();
    bool isStatic = llvm::none_of(tileRanges, ShapedType::isDynamic);
    // Vector sizes need their scalable flags (all false) beside them.
    SmallVector<bool> fixed(isStatic ? 0 : rank, false);
    ArrayRef<int64_t> vs = isStatic ? ArrayRef<int64_t>() : vsizes;
    if (failed(linalg::vectorizeOpPrecondition(tile, vs, fixed)))
      return;
    rw.setInsertionPoint(tile);
    FailureOr<linalg::VectorizationResult> v =
        linalg::vectorize(rw, tile, vs, fixed);
    if (failed(v))
      return;
    Operation *parent = tile->getParentOp();
    if (tile->getNumResults() == 0)
      rw.eraseOp(tile);
    else
      rw.replaceOp(tile, v->replacements);
    if (rows)
      rowLanes(parent);
  }

  // A row reduction's tile (lanes rows x lanes columns, in parent) with
  // its rows in the vector lanes: the columns transposed into the lanes
  // and added one after the other to the rows' accumulators (MLIR's
  // inner-parallel lowering), instead of one ordered reduction per row.
  void rowLanes(Operation *parent) {
    SmallVector<Operation *> reds;
    parent->walk([&](vector::MultiDimReductionOp r) { reds.push_back(r); });
    if (reds.empty())
      return;
    RewritePatternSet p(&getContext());
    vector::populateVectorMultiReductionLoweringPatterns(
        p, vector::VectorMultiReductionLowering::InnerParallel);
    GreedyRewriteConfig c;
    c.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    // Failing leaves the ordered reductions: correct, slower.
    (void)applyOpPatternsGreedily(reds, std::move(p), c);
  }

  // The vector ops made above, lowered to the 1-D forms the pipeline's
  // vector-to-scf and vector-to-llvm take.
  // First the unit dims go (a reduction over a dim of 1, the outer dims
  // of a tile: an elementwise op on 1-D vectors), then what is left is
  // lowered.
  LogicalResult lowerVectors(func::FuncOp f) {
    RewritePatternSet units(&getContext());
    vector::MultiDimReductionOp::getCanonicalizationPatterns(units,
                                                             &getContext());
    vector::populateCastAwayVectorLeadingOneDimPatterns(units);
    vector::populateVectorTransferDropUnitDimsPatterns(units);
    vector::populateDropUnitDimWithShapeCastPatterns(units);
    vector::ShapeCastOp::getCanonicalizationPatterns(units, &getContext());
    vector::BroadcastOp::getCanonicalizationPatterns(units, &getContext());
    math::populateExpansionPatterns(units, {"fpowi"});
    if (failed(applyPatternsGreedily(f, std::move(units))))
      return failure();
    RewritePatternSet p(&getContext());
    vector::populateVectorTransferPermutationMapLoweringPatterns(p);
    vector::populateVectorMultiReductionLoweringPatterns(
        p, vector::VectorMultiReductionLowering::InnerReduction);
    vector::populateCastAwayVectorLeadingOneDimPatterns(p);
    vector::populateVectorTransferDropUnitDimsPatterns(p);
    vector::populateVectorBroadcastLoweringPatterns(p);
    vector::populateVectorMaskOpLoweringPatterns(p);
    vector::populateVectorMaskLoweringPatternsForSideEffectingOps(p);
    vector::populateVectorShapeCastLoweringPatterns(p);
    vector::populateVectorTransposeLoweringPatterns(
        p, vector::VectorTransposeLowering::Shuffle1D);
    vector::populateVectorMaskMaterializationPatterns(p, true);
    vector::TransferReadOp::getCanonicalizationPatterns(p, &getContext());
    vector::TransferWriteOp::getCanonicalizationPatterns(p, &getContext());
    vector::ShapeCastOp::getCanonicalizationPatterns(p, &getContext());
    vector::BroadcastOp::getCanonicalizationPatterns(p, &getContext());
    vector::ExtractOp::getCanonicalizationPatterns(p, &getContext());
    memref::SubViewOp::getCanonicalizationPatterns(p, &getContext());
    affine::AffineMinOp::getCanonicalizationPatterns(p, &getContext());
    affine::AffineApplyOp::getCanonicalizationPatterns(p, &getContext());
    return applyPatternsGreedily(f, std::move(p));
  }

  // On one thread, the loops of autosched-fuse-rows (scf.forall, for the
  // threads) made serial scf.for loops: no OpenMP where the rest has none.
  void serialRows(IRRewriter &rw, func::FuncOp f) {
    SmallVector<scf::ForallOp> loops;
    f.walk([&](scf::ForallOp l) {
      bool rows = false;
      l.getBody()->walk([&](linalg::LinalgOp op) { rows |= rowsTile(op); });
      if (rows && l->getNumResults() == 0)
        loops.push_back(l);
    });
    for (scf::ForallOp l : loops) {
      rw.setInsertionPoint(l);
      // Failing leaves the forall: correct, OpenMP-lowered.
      (void)scf::forallToForLoop(rw, l);
    }
  }

  void runOnOperation() override {
    func::FuncOp f = getOperation();
    SmallVector<linalg::LinalgOp> ops;
    f.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rw(&getContext());
    bool changed = false;
    if (threads <= 1)
      serialRows(rw, f);
    for (linalg::LinalgOp op : ops) {
      SmallVector<int64_t> ranges;
      if (!candidate(op, ranges))
        continue;
      int64_t chunks;
      int64_t d = threadDim(op, ranges, rowsTile(op) ? 1 : threads, &chunks);
      linalg::LinalgOp inner = d >= 0 ? splitThreads(rw, op, d, chunks) : op;
      SmallVector<int64_t> innerRanges = inner.getStaticLoopRanges();
      // A chunk of dynamic size keeps the op's ranges for the vector sizes.
      for (size_t i = 0; i < innerRanges.size(); i++)
        if (ShapedType::isDynamic(innerRanges[i]))
          innerRanges[i] = ranges[i];
      vectorizeTiles(rw, inner, innerRanges);
      changed = true;
    }
    // Failing to simplify leaves correct (slower) vector code.
    if (changed)
      (void)lowerVectors(f);
  }
};

} // namespace

void autoschedRegisterVectorizeRestPass() {
  PassRegistration<VectorizeRestPass>();
}
