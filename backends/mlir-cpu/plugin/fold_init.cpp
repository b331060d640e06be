// autosched-fold-init: a matmul's zero fill folded into its register tiles.
// Runs on tensors, after the schedules (vectorized, the accumulator tiles
// hoisted out of the K loops) and before bufferization, on the fills of the
// functions the outliner marked autosched.inits (analysis/outline.c: a
// matmul's dispatch holding its zero fill, fused by the schedule into the
// threads' chunks; canonicalization may have moved the fill after a
// reshape of its result, as a new fill), but for those the schedule marked
// autosched.inits_kept (codegen.c: the op cut into parts along M, N or the
// batch, where a part starts from the result of another and reads the fill
// where that one did not write: reads this walk does not see). A last M
// register tile peeled after the loop over whole ones is followed: a slice
// of that loop's result outside the rows it wrote still holds the fill;
// the schedule says how many it peeled (autosched.inits_peeled) and the
// walk must find as many, else the fill stays.
//
// Without it, the fill is a memset of each thread's chunk of the result and
// every register tile then reads its accumulator back from that chunk.
// With it, each register tile's accumulator starts as a vector of the fill's
// value in registers and the memset goes: the tile loops write every element
// of the chunk, and no element is read before it is written. What is
// checked, from the fill's result along its uses:
//   - every use is a slice of it (extract_slice, expand/collapse_shape), a
//     loop's iter_args (scf.for), a write into it (insert_slice,
//     parallel_insert_slice, transfer_write, a linalg op that only writes
//     its init), or a vector.transfer_read: the reads folded;
//   - a read through a loop's iter_args reads the value each iteration
//     starts with: the loop's induction variable must be an offset of a
//     slice (or an index of the read) below it, over a size no larger than
//     the loop's step, so that no iteration reads what an earlier one
//     wrote (or the loop runs once). A loop over K (its accumulator read
//     again each step: a K cache tile that does not cover K) fails this;
//     its first iteration is peeled off (static bounds), and the fill folds
//     into that first iteration's register tiles, the loop over the rest
//     of K reading what it wrote.
// Anything else leaves the fill as it is: never an error. The results are
// bit for bit the same: the first FMA of each element adds to the same zero.

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {

// A loop passed through on the way to a read: whether its induction
// variable was found as a disjoint offset below it (indexed), or in the
// computation of an offset at all (touched).
struct PathLoop {
  scf::ForOp loop;
  bool indexed;
  bool touched;
};

struct Walk {
  SmallVector<PathLoop> loops;
  SmallVector<vector::TransferReadOp> reads;
  // Loops a read went through without being indexed by them.
  llvm::SetVector<Operation *> unindexed;
  // Slices of a loop's result outside what the loop wrote, walked.
  int64_t peeled = 0;
};

// The loop's trip count when static.
static std::optional<int64_t> tripCount(scf::ForOp l) {
  std::optional<APInt> n = l.getStaticTripCount();
  if (!n)
    return std::nullopt;
  return n->getSExtValue();
}

// Whether v is computed from iv (a few ops deep).
static bool dependsOn(Value v, Value iv, int depth = 0) {
  if (v == iv)
    return true;
  Operation *d = v.getDefiningOp();
  if (d == nullptr || depth > 8)
    return d != nullptr;	/* too deep: assume it does */
  return llvm::any_of(d->getOperands(), [&](Value o) {
    return dependsOn(o, iv, depth + 1);
  });
}

// v as iv + c (an affine.apply of iv alone adding a constant, as unrolled
// register tiles index their rows): c, or none.
static std::optional<int64_t> ivPlus(Value v, Value iv) {
  if (v == iv)
    return 0;
  auto a = v.getDefiningOp<affine::AffineApplyOp>();
  if (!a || a->getNumOperands() != 1 || a->getOperand(0) != iv)
    return std::nullopt;
  AffineExpr e = a.getAffineMap().getResult(0);
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin || bin.getKind() != AffineExprKind::Add)
    return std::nullopt;
  AffineExpr l = bin.getLHS(), r = bin.getRHS();
  if (isa<AffineConstantExpr>(l))
    std::swap(l, r);
  auto c = dyn_cast<AffineConstantExpr>(r);
  if (!c || !isa<AffineDimExpr, AffineSymbolExpr>(l))
    return std::nullopt;
  return c.getValue();
}

// Mark the path's loops whose induction variable is offset (size size) of
// a slice or read below them, within one step, or goes into it otherwise.
static void markOffset(Walk &w, OpFoldResult off, int64_t size) {
  auto v = dyn_cast<Value>(off);
  if (!v)
    return;
  for (PathLoop &p : w.loops) {
    std::optional<int64_t> step = getConstantIntValue(p.loop.getStep());
    std::optional<int64_t> c = ivPlus(v, p.loop.getInductionVar());
    if (c && step && size > 0 && *c >= 0 && *c + size <= *step)
      p.indexed = true;
    else if (dependsOn(v, p.loop.getInductionVar()))
      p.touched = true;
  }
}

static bool walkValue(Walk &w, Value v);
static bool walkSlice(Walk &w, tensor::ExtractSliceOp s);

// The rows (dim *d, [*lo, *hi)) loop f wrote of the value it carries in
// arg: a slice of arg at the induction variable, a step wide; false if none.
static bool writtenRange(scf::ForOp f, BlockArgument arg, int64_t *d,
                         int64_t *lo, int64_t *hi) {
  std::optional<int64_t> lb = getConstantIntValue(f.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(f.getUpperBound());
  std::optional<int64_t> st = getConstantIntValue(f.getStep());
  if (!lb || !ub || !st)
    return false;
  for (Operation *user : arg.getUsers()) {
    auto s = dyn_cast<tensor::ExtractSliceOp>(user);
    if (!s)
      continue;
    SmallVector<OpFoldResult> offs = s.getMixedOffsets();
    for (auto [i, size] : llvm::enumerate(s.getStaticSizes())) {
      auto v = dyn_cast<Value>(offs[i]);
      if (v && v == f.getInductionVar() && size == *st) {
        *d = i;
        *lo = *lb;
        *hi = *ub;
        return true;
      }
    }
  }
  return false;
}

// The uses of loop f's result (the value it carried from init u): a slice
// of it outside the rows f wrote (the peeled last tile after a loop over
// whole ones) still holds the fill; walked as such. Other uses read what
// the loops wrote, or write.
static bool walkResult(Walk &w, scf::ForOp f, OpOperand &u) {
  BlockArgument arg = f.getTiedLoopRegionIterArg(&u);
  int64_t d, lo, hi;
  if (!writtenRange(f, arg, &d, &lo, &hi))
    return true;
  for (OpOperand &r : f.getTiedLoopResult(&u).getUses()) {
    auto s = dyn_cast<tensor::ExtractSliceOp>(r.getOwner());
    if (!s || ShapedType::isDynamic(s.getStaticOffsets()[d]) ||
        ShapedType::isDynamic(s.getStaticSizes()[d]))
      continue;
    int64_t o = s.getStaticOffsets()[d], n = s.getStaticSizes()[d];
    if (o < hi && o + n > lo)
      continue;
    if (!walkSlice(w, s))
      return false;
    w.peeled++;
  }
  return true;
}

// A read of the fill's value: every loop on its path must be indexed (a
// loop that is not is noted, and the read kept: the walk goes on).
static bool walkRead(Walk &w, vector::TransferReadOp r) {
  if (r.getMask())
    return false;
  SmallVector<PathLoop> saved = w.loops;
  // Each index of the read and its size (1 along a dim the vector drops).
  VectorType vt = r.getVectorType();
  AffineMap map = r.getPermutationMap();
  SmallVector<int64_t> size(r.getIndices().size(), 1);
  for (unsigned i = 0; i < map.getNumResults(); i++) {
    auto d = dyn_cast<AffineDimExpr>(map.getResult(i));
    if (d)
      size[d.getPosition()] = vt.getDimSize(i);
  }
  for (auto [i, idx] : llvm::enumerate(r.getIndices()))
    markOffset(w, OpFoldResult(idx), size[i]);
  // A loop that moves the read some other way than by whole tiles: no.
  // One that does not move it (over K): each iteration reads the tile the
  // one before wrote; noted, to peel its first iteration.
  bool ok = true;
  for (const PathLoop &p : w.loops) {
    if (p.indexed || tripCount(p.loop) == std::optional<int64_t>(1))
      continue;
    if (p.touched)
      ok = false;
    else
      w.unindexed.insert(p.loop);
  }
  w.loops = saved;
  w.reads.push_back(r);
  return ok;
}

static bool walkSlice(Walk &w, tensor::ExtractSliceOp s) {
  SmallVector<PathLoop> saved = w.loops;
  if (!llvm::all_of(s.getStaticStrides(), [](int64_t x) { return x == 1; }))
    return false;
  SmallVector<OpFoldResult> offs = s.getMixedOffsets();
  for (auto [i, size] : llvm::enumerate(s.getStaticSizes()))
    markOffset(w, offs[i], size);
  bool ok = walkValue(w, s.getResult());
  w.loops = saved;
  return ok;
}

// One use of a value holding the fill's elements.
static bool walkUse(Walk &w, OpOperand &u) {
  Operation *o = u.getOwner();
  if (auto s = dyn_cast<tensor::ExtractSliceOp>(o))
    return walkSlice(w, s);
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(o))
    return walkValue(w, o->getResult(0));
  if (auto r = dyn_cast<vector::TransferReadOp>(o))
    return walkRead(w, r);
  if (auto f = dyn_cast<scf::ForOp>(o)) {
    BlockArgument arg = f.getTiedLoopRegionIterArg(&u);
    if (!arg)
      return false;
    w.loops.push_back({f, false, false});
    bool ok = walkValue(w, arg);
    w.loops.pop_back();
    return ok && walkResult(w, f, u);
  }
  // Writes into it: what they leave is written before it is read (or is
  // the tile loops' result, every element written).
  if (auto i = dyn_cast<tensor::InsertSliceOp>(o))
    return &u == &i.getDestMutable();
  if (auto i = dyn_cast<tensor::ParallelInsertSliceOp>(o))
    return &u == &i.getDestMutable();
  if (auto t = dyn_cast<vector::TransferWriteOp>(o))
    return &u == &t.getBaseMutable() && !t.getMask();
  if (auto l = dyn_cast<linalg::LinalgOp>(o))
    return l.isDpsInit(&u) && !l.payloadUsesValueFromOperand(&u);
  return false;
}

static bool walkValue(Walk &w, Value v) {
  for (OpOperand &u : v.getUses()) {
    if (!walkUse(w, u))
      return false;
  }
  return true;
}

struct FoldInitPass : PassWrapper<FoldInitPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FoldInitPass)
  StringRef getArgument() const final { return "autosched-fold-init"; }
  StringRef getDescription() const final {
    return "fold a matmul's zero fill (autosched.init) into its register "
           "tiles' accumulators";
  }
  void getDependentDialects(DialectRegistry &r) const override {
    r.insert<arith::ArithDialect, vector::VectorDialect>();
  }

  void runOnOperation() override {
    // Each fill, and how many peeled M tiles its schedule made (the
    // slices of a loop's result the walk must find, autosched.inits_peeled).
    SmallVector<std::pair<linalg::FillOp, int64_t>> fills;
    getOperation()->walk([&](FunctionOpInterface fn) {
      if (!fn->hasAttr("autosched.inits") ||
          fn->hasAttr("autosched.inits_kept"))
        return;
      int64_t peels = 0;
      if (auto p = fn->getAttrOfType<IntegerAttr>("autosched.inits_peeled"))
        peels = p.getInt();
      fn.walk([&](linalg::FillOp f) { fills.push_back({f, peels}); });
    });
    for (auto [f, peels] : fills)
      fold(f, peels);
  }

  // Peel the first iteration off each loop of w.unindexed: 0, or -1 when
  // one of them cannot be (dynamic bounds, one trip).
  static int peelFirst(Walk &w) {
    for (Operation *o : w.unindexed) {
      auto l = cast<scf::ForOp>(o);
      std::optional<int64_t> n = tripCount(l);
      if (!n || *n < 2)
        return -1;
    }
    for (Operation *o : w.unindexed) {
      IRRewriter rw(o->getContext());
      scf::ForOp first;
      rw.setInsertionPoint(o);
      if (failed(scf::peelForLoopFirstIteration(rw, cast<scf::ForOp>(o),
                                                first)))
        return -1;
    }
    return 0;
  }

  void fold(linalg::FillOp f, int64_t peels) {
    Attribute value;
    if (!matchPattern(f.getInputs()[0], m_Constant(&value)) ||
        f->getNumResults() != 1)
      return;
    Walk w;
    // A K loop of each part peeled once: a walk that still finds one
    // (nested K loops, which no schedule makes) leaves the fill.
    if (!walkValue(w, f->getResult(0)) || w.reads.empty())
      return;
    if (!w.unindexed.empty()) {
      if (peelFirst(w) != 0)
        return;
      w = Walk();
      if (!walkValue(w, f->getResult(0)) || w.reads.empty() ||
          !w.unindexed.empty())
        return;
    }
    // Every peeled M tile found (each reads what its main loop left of the
    // fill): else a part would read the fill this walk did not see.
    if (w.peeled != peels)
      return;
    for (vector::TransferReadOp r : w.reads) {
      OpBuilder b(r);
      auto splat = DenseElementsAttr::get(r.getVectorType(), value);
      Value c = arith::ConstantOp::create(b, r.getLoc(), splat);
      r.getResult().replaceAllUsesWith(c);
      r.erase();
    }
    f->getResult(0).replaceAllUsesWith(f.getOutputs()[0]);
    f.erase();
  }
};

} // namespace

void autoschedRegisterFoldInitPass() { PassRegistration<FoldInitPass>(); }
