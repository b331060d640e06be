// autosched's MLIR pass plugin (loaded by mlir-opt with --load-pass-plugin):
// autosched-vnni-dot (here), autosched-quantized-matmul (quantized.cpp) and
// autosched-vectorize-rest (vectorize_rest.cpp).
//
// autosched-vnni-dot: the i8 x i8 -> i32 contractions of the VNNI dot
// kernel, one row of A against a [16][4] panel of B (16 i32 lanes, each the
// sum of four products), become AVX512-VNNI's vpdpbusd
// (llvm.x86.avx512.vpdpbusd.512: 64 multiply-adds an instruction).
//
// MLIR 22 has no operation for it: x86vector.avx.dot.i8 is vpdpbssd (signed
// x signed, AVX-VNNI-INT8 / AVX10.2), which this kind of CPU lacks, and LLVM
// forms vpdpbusd only from whole reductions to a scalar. The pass therefore
// calls the LLVM intrinsic itself; everything around it stays MLIR.
//
// A contraction is rewritten when, dropping unit dims, it reduces one dim of 4
// into a 16-lane i32 accumulator, each operand is widened from i8 (arith.extui
// or arith.extsi; an i8 operand, which a contraction extends signed) through
// broadcasts and shape casts only, and each is a [16][4] panel indexed [n][k]
// or 4 bytes for every lane (indexed [k], or [n][k] broadcast along n).
// vpdpbusd multiplies unsigned by signed bytes:
// - u8 x s8, s8 x u8: as they are;
// - s8 x s8: the operand with 4 bytes for every lane (A's row) gets 128
//   added (its sign bits flipped: now u8), and 128 x the sums of the other's
//   bytes (B's columns) are taken back after the K loop. The sums are one
//   running vpdpbusd of 0x80 bytes per B panel: in a loop of their own
//   before the loop over rows when the panels do not depend on the row and
//   come from a buffer the row loop does not write (packed B: once for all
//   row tiles, as oneDNN sums B's columns once while packing it), else
//   carried by the K loop, else after each dot;
// - u8 x u8: left as it is.
// Anything else is left as it is too: it still lowers, only without vpdpbusd.

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/MapVector.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

#include <algorithm>

using namespace mlir;

namespace {

constexpr int64_t kLanes = 16; // i32 lanes of a 512-bit register
constexpr int64_t kGroup = 4;  // products summed into one lane

static int64_t numElements(Type t) {
  auto v = dyn_cast<VectorType>(t);
  return v ? v.getNumElements() : 1;
}

// The bytes of an operand: its i32 value traced back to the i8 value it was
// widened from, through broadcasts and shape casts. Ops that keep the number
// of elements keep their linear order; one broadcast of 4 bytes whose
// 4-element dim stays innermost repeats them in every lane.
struct Narrow {
  Value src;
  bool isUnsigned = false;
  bool repeated = false; // src's 4 bytes repeated along n
};

static bool innermostGroup(vector::BroadcastOp bc) {
  auto from = dyn_cast<VectorType>(bc.getSourceType());
  VectorType to = bc.getResultVectorType();
  if (!from || from.getNumElements() != kGroup)
    return false;
  int64_t off = to.getRank() - from.getRank();
  for (int64_t i = 0; i < from.getRank(); i++)
    if (from.getDimSize(i) != 1)
      for (int64_t j = i + off + 1; j < to.getRank(); j++)
        if (to.getDimSize(j) != 1)
          return false;
  return true;
}

static FailureOr<Narrow> narrow(Value v) {
  Narrow n;
  bool widened = false;
  for (;;) {
    Operation *def = v.getDefiningOp();
    if (def == nullptr)
      break;
    if (!widened && isa<arith::ExtUIOp, arith::ExtSIOp>(def)) {
      n.isUnsigned = isa<arith::ExtUIOp>(def);
      widened = true;
      v = def->getOperand(0);
      continue;
    }
    if (!isa<vector::BroadcastOp, vector::ShapeCastOp>(def))
      break;
    if (numElements(def->getOperand(0).getType()) !=
        numElements(def->getResult(0).getType())) {
      auto bc = dyn_cast<vector::BroadcastOp>(def);
      if (!bc || n.repeated || !innermostGroup(bc))
        return failure();
      n.repeated = true;
    }
    v = def->getOperand(0);
  }
  // Not widened: an i8 operand, which a contraction extends signed.
  if (!getElementTypeOrSelf(v.getType()).isInteger(8))
    return failure();
  n.src = v;
  return n;
}

// The operand's dims of more than one element, in its own order.
static FailureOr<SmallVector<unsigned>> bigDims(AffineMap map,
                                                ArrayRef<int64_t> bounds) {
  SmallVector<unsigned> dims;
  for (AffineExpr e : map.getResults()) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d)
      return failure();
    if (bounds[d.getPosition()] != 1)
      dims.push_back(d.getPosition());
  }
  return dims;
}

// Whether an operand indexed by dims (n, k: the contraction's two big dims)
// can be given to vpdpbusd: a [16][4] panel ([n][k], its bytes in order) or
// four bytes for every lane ([k] alone, or [n][k] broadcast along n).
static bool usable(const Narrow &o, ArrayRef<unsigned> dims, unsigned n,
                   unsigned k) {
  bool nk = dims.size() == 2 && dims[0] == n && dims[1] == k;
  bool kOnly = dims.size() == 1 && dims[0] == k;
  int64_t count = numElements(o.src.getType());
  if (o.repeated)
    return nk && count == kGroup;
  return (nk && count == kLanes * kGroup) || (kOnly && count == kGroup);
}

// The operand's 64 bytes in vpdpbusd's order: lane j holds k = 0..3 of n = j.
// shift: 4 bytes for every lane, each s8 made u8 + 128 (its sign bit
// flipped).
static Value panelBytes(RewriterBase &rw, Location loc, const Narrow &o,
                        bool shift = false) {
  Type i8 = rw.getI8Type(), i32 = rw.getI32Type();
  auto bytes = VectorType::get({kLanes * kGroup}, i8);
  auto cast = [&](Value v, VectorType t) -> Value {
    return v.getType() == t ? v : vector::ShapeCastOp::create(rw, loc, t, v);
  };
  if (numElements(o.src.getType()) == kLanes * kGroup)
    return cast(o.src, bytes);
  // Four bytes in every lane: one 32-bit broadcast.
  Value v = cast(o.src, VectorType::get({kGroup}, i8));
  v = vector::BitCastOp::create(rw, loc, VectorType::get({1}, i32), v);
  v = vector::ExtractOp::create(rw, loc, v, ArrayRef<int64_t>{0});
  v = vector::BroadcastOp::create(rw, loc, VectorType::get({kLanes}, i32), v);
  v = vector::BitCastOp::create(rw, loc, bytes, v);
  if (shift)
    v = arith::XOrIOp::create(
        rw, loc, v,
        arith::ConstantOp::create(
            rw, loc, DenseElementsAttr::get(bytes, rw.getI8IntegerAttr(-128))));
  return v;
}

constexpr const char *kIntrinsic = "llvm.x86.avx512.vpdpbusd.512";

// The operands of a contraction vpdpbusd can compute, or failure. s8 x s8:
// shifted names the operand with 4 bytes for every lane, made unsigned by
// adding 128; 128 x the sums of the other's bytes are taken back.
struct Match {
  Narrow lhs, rhs;
  int shifted = -1; // -1: u8 x s8, 0: lhs shifted, 1: rhs shifted
};

static FailureOr<Match> matchDot(vector::ContractionOp op) {
  if (op.getKind() != vector::CombiningKind::ADD ||
      isa<vector::MaskOp>(op->getParentOp()))
    return failure();
  auto accType = dyn_cast<VectorType>(op.getAccType());
  if (!accType || accType.isScalable() ||
      !accType.getElementType().isInteger(32) ||
      accType.getNumElements() != kLanes)
    return failure();
  SmallVector<int64_t> bounds;
  op.getIterationBounds(bounds);
  SmallVector<vector::IteratorType> iters = op.getIteratorTypesArray();
  int n = -1, k = -1;
  for (size_t i = 0; i < bounds.size(); i++) {
    if (bounds[i] == 1)
      continue;
    if (iters[i] == vector::IteratorType::parallel && n < 0 &&
        bounds[i] == kLanes)
      n = static_cast<int>(i);
    else if (iters[i] == vector::IteratorType::reduction && k < 0 &&
             bounds[i] == kGroup)
      k = static_cast<int>(i);
    else
      return failure();
  }
  if (n < 0 || k < 0)
    return failure();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto accDims = bigDims(maps[2], bounds);
  auto lhsDims = bigDims(maps[0], bounds), rhsDims = bigDims(maps[1], bounds);
  if (failed(accDims) || accDims->size() != 1 ||
      (*accDims)[0] != static_cast<unsigned>(n) || failed(lhsDims) ||
      failed(rhsDims))
    return failure();
  auto lhs = narrow(op.getLhs()), rhs = narrow(op.getRhs());
  if (failed(lhs) || failed(rhs) || !usable(*lhs, *lhsDims, n, k) ||
      !usable(*rhs, *rhsDims, n, k))
    return failure();
  // vpdpbusd multiplies unsigned by signed bytes.
  Match m{*lhs, *rhs};
  if (lhs->isUnsigned && rhs->isUnsigned)
    return failure();
  if (!lhs->isUnsigned && !rhs->isUnsigned) {
    if (numElements(lhs->src.getType()) == kGroup)
      m.shifted = 0;
    else if (numElements(rhs->src.getType()) == kGroup)
      m.shifted = 1;
    else
      return failure();
  }
  return m;
}

// An s8 x s8 contraction made vpdpbusd: what is still to be taken back.
struct Pending {
  Operation *dot;   // its result, 16 lanes, is 128 x sums(other) too high
  Value other;      // the unshifted operand's 64 bytes
  Value result;     // what replaced the contraction
};

static Value lanesOf(RewriterBase &rw, Location loc, Value v) {
  auto lanes = VectorType::get({kLanes}, rw.getI32Type());
  return v.getType() == lanes ? v
                              : vector::ShapeCastOp::create(rw, loc, lanes, v);
}

static std::optional<Pending> rewriteDot(IRRewriter &rw,
                                         vector::ContractionOp op,
                                         const Match &m,
                                         func::FuncOp intrinsic) {
  Location loc = op.getLoc();
  rw.setInsertionPoint(op);
  Value lb = panelBytes(rw, loc, m.lhs, m.shifted == 0),
        rb = panelBytes(rw, loc, m.rhs, m.shifted == 1);
  Value acc = lanesOf(rw, loc, op.getAcc());
  // Lane j += sum over t of zext(u[4j+t]) * sext(s[4j+t]).
  bool lhsU = m.shifted >= 0 ? m.shifted == 0 : m.lhs.isUnsigned;
  Value u = lhsU ? lb : rb, s = lhsU ? rb : lb;
  auto call = func::CallOp::create(rw, loc, intrinsic, ValueRange{acc, u, s});
  Value dot = call.getResult(0);
  if (dot.getType() != op.getAccType())
    dot = vector::ShapeCastOp::create(rw, loc, op.getAccType(), dot);
  rw.replaceOp(op, dot);
  if (m.shifted < 0)
    return std::nullopt;
  return Pending{call.getOperation(), s, dot};
}

// 128 x the sums of each lane's 4 bytes of s, added to acc: vpdpbusd of
// 0x80 bytes (u8 128) and s.
static Value sums128(RewriterBase &rw, Location loc, func::FuncOp intrinsic,
                     Value acc, Value s) {
  auto bytes = VectorType::get({kLanes * kGroup}, rw.getI8Type());
  Value k128 = arith::ConstantOp::create(
      rw, loc, DenseElementsAttr::get(bytes, rw.getI8IntegerAttr(-128)));
  return func::CallOp::create(rw, loc, intrinsic, ValueRange{acc, k128, s})
      .getResult(0);
}

// Whether an op only reshapes (same elements in the same order).
static bool reshapes(Operation *op) {
  return op != nullptr && op->getNumOperands() >= 1 &&
         op->getNumResults() == 1 &&
         isa<vector::ShapeCastOp, vector::BroadcastOp, vector::ExtractOp>(op) &&
         numElements(op->getOperand(0).getType()) ==
             numElements(op->getResult(0).getType());
}

// The iter_arg of loop whose value v is (through reshapes), or -1.
static int iterArgOf(scf::ForOp loop, Value v) {
  while (reshapes(v.getDefiningOp()))
    v = v.getDefiningOp()->getOperand(0);
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != loop.getBody() || arg.getArgNumber() == 0)
    return -1;
  return static_cast<int>(arg.getArgNumber()) - 1;
}

// The position loop yields v at (through single-use reshapes), or -1.
static int yieldedAt(scf::ForOp loop, Value v) {
  for (;;) {
    if (!v.hasOneUse())
      return -1;
    OpOperand &use = *v.getUses().begin();
    Operation *user = use.getOwner();
    if (isa<scf::YieldOp>(user) && user->getParentOp() == loop)
      return static_cast<int>(use.getOperandNumber());
    if (!reshapes(user))
      return -1;
    v = user->getResult(0);
  }
}

// Two values that are the same: one value, or the same op (name,
// attributes, types) on operands that are the same, up to depth ops deep
// (the same panel read again for another row, then reshaped).
static bool sameValue(Value a, Value b, int depth) {
  if (a == b)
    return true;
  Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
  if (depth == 0 || x == nullptr || y == nullptr || a.getType() != b.getType())
    return false;
  return OperationEquivalence::isEquivalentTo(
      x, y,
      [&](Value l, Value r) { return success(sameValue(l, r, depth - 1)); },
      nullptr, OperationEquivalence::IgnoreLocations);
}

// Whether loop's body writes memory (other than through our calls, which do
// not).
static bool writesMemory(scf::ForOp loop, func::FuncOp intrinsic) {
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto call = dyn_cast<func::CallOp>(op);
        call && call.getCallee() == intrinsic.getSymName())
      continue;
    if (isMemoryEffectFree(&op))
      continue;
    auto eff = dyn_cast<MemoryEffectOpInterface>(op);
    if (!eff || !eff.onlyHasEffect<MemoryEffects::Read>())
      return true;
  }
  return false;
}

// The shape both corrections after a loop need: every dot's accumulator an
// iter_arg of the loop (arg), its result yielded back to it, nothing else
// done to them; slot: which of the distinct unshifted operands it uses.
static bool loopShape(scf::ForOp loop, ArrayRef<Pending> dots,
                      func::FuncOp intrinsic, SmallVector<int> &arg,
                      SmallVector<int> &slot, SmallVector<Value> &slots) {
  if (writesMemory(loop, intrinsic))
    return false;
  arg.assign(dots.size(), -1);
  slot.assign(dots.size(), -1);
  llvm::SmallDenseSet<int> seen;
  for (size_t i = 0; i < dots.size(); i++) {
    arg[i] = iterArgOf(loop, dots[i].dot->getOperand(0));
    if (arg[i] < 0 || yieldedAt(loop, dots[i].result) != arg[i] ||
        !seen.insert(arg[i]).second)
      return false;
    size_t j = 0;
    while (j < slots.size() && !sameValue(slots[j], dots[i].other, 3))
      j++;
    if (j == slots.size())
      slots.push_back(dots[i].other);
    slot[i] = static_cast<int>(j);
  }
  return true;
}

// After loop (whose results are now those of newLoop): each dot's
// accumulator minus its sums.
static void subtractAfter(IRRewriter &rw, Operation *newLoop,
                          ArrayRef<int> arg, ArrayRef<int> slot,
                          ArrayRef<Value> sums) {
  rw.setInsertionPointAfter(newLoop);
  for (size_t i = 0; i < arg.size(); i++) {
    Location loc = newLoop->getLoc();
    Value res = newLoop->getResult(arg[i]);
    Value sum = sums[slot[i]];
    if (sum.getType() != res.getType())
      sum = vector::ShapeCastOp::create(rw, loc, res.getType(), sum);
    Value fixed = arith::SubIOp::create(rw, loc, res, sum);
    rw.replaceAllUsesExcept(res, fixed, fixed.getDefiningOp());
  }
}

// The memref a view is of (through subviews, reshapes, casts).
static Value baseOf(Value m) {
  while (auto view = m.getDefiningOp<ViewLikeOpInterface>())
    m = view.getViewSource();
  return m;
}

// Whether v can be computed before rows from loop's induction variable and
// what rows does not define: ops in loop's body that only compute or read
// memory (the memrefs they read collected in reads), and ops in rows' body
// that only compute.
static bool hoistable(Value v, scf::ForOp loop, scf::ForOp rows,
                      SmallVector<Value> &reads) {
  if (v == loop.getInductionVar() || rows.isDefinedOutsideOfLoop(v))
    return true;
  Operation *op = v.getDefiningOp();
  if (op == nullptr || op->getNumRegions() != 0)
    return false;
  if (op->getBlock() == rows.getBody()) {
    if (!isMemoryEffectFree(op))
      return false;
    return llvm::all_of(op->getOperands(), [&](Value o) {
      return hoistable(o, loop, rows, reads);
    });
  }
  if (op->getBlock() != loop.getBody())
    return false;
  if (!isMemoryEffectFree(op)) {
    auto eff = dyn_cast<MemoryEffectOpInterface>(op);
    SmallVector<MemoryEffects::EffectInstance> effects;
    if (!eff)
      return false;
    eff.getEffects(effects);
    for (auto &e : effects) {
      if (!isa<MemoryEffects::Read>(e.getEffect()) || !e.getValue())
        return false;
      reads.push_back(baseOf(e.getValue()));
    }
  }
  for (Value operand : op->getOperands())
    if (!hoistable(operand, loop, rows, reads))
      return false;
  return true;
}

// Whether something in rows outside loop may write what reads read: a write
// to an unknown place, or to a view of one of them (the B panels are in a
// buffer of their own; the accumulators go to C).
static bool mayClobber(scf::ForOp rows, scf::ForOp loop,
                       ArrayRef<Value> reads, func::FuncOp intrinsic) {
  bool clobber = false;
  rows.getBody()->walk([&](Operation *op) {
    if (loop->isAncestor(op) || isMemoryEffectFree(op) ||
        op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return;
    if (auto call = dyn_cast<func::CallOp>(op);
        call && call.getCallee() == intrinsic.getSymName())
      return;
    auto eff = dyn_cast<MemoryEffectOpInterface>(op);
    SmallVector<MemoryEffects::EffectInstance> effects;
    if (!eff) {
      clobber = true;
      return;
    }
    eff.getEffects(effects);
    for (auto &e : effects) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(e.getEffect()))
        continue;
      if (!e.getValue() || llvm::is_contained(reads, baseOf(e.getValue())))
        clobber = true;
    }
  });
  return clobber;
}

// Take the 128 x sums back for the s8 x s8 dots of one K loop once for every
// row tile: when the loop sits directly in a loop over rows and the B panels
// it reads do not depend on the row, a loop of its own before the row loop
// makes one running vpdpbusd of 0x80 bytes per panel, and each dot's
// accumulator has it subtracted after the K loop. The reads must be of a
// fresh buffer (an allocation) nothing in the row loop writes.
static bool compensateBeforeRows(IRRewriter &rw, scf::ForOp loop,
                                 ArrayRef<Pending> dots,
                                 func::FuncOp intrinsic) {
  auto rows = dyn_cast<scf::ForOp>(loop->getParentOp());
  SmallVector<int> arg, slot;
  SmallVector<Value> slots, reads;
  if (!rows || !loopShape(loop, dots, intrinsic, arg, slot, slots))
    return false;
  for (Value bound : {loop.getLowerBound(), loop.getUpperBound(),
                      loop.getStep()})
    if (!rows.isDefinedOutsideOfLoop(bound))
      return false;
  for (Value v : slots)
    if (!hoistable(v, loop, rows, reads))
      return false;
  for (Value r : reads)
    if (!r.getDefiningOp<memref::AllocOp>() &&
        !r.getDefiningOp<memref::AllocaOp>())
      return false;
  if (mayClobber(rows, loop, reads, intrinsic))
    return false;

  Location loc = loop.getLoc();
  auto lanes = VectorType::get({kLanes}, rw.getI32Type());
  // What each panel needs (ops of rows' body and of loop's), cloned in
  // their order: rows' before the sums loop, loop's in it.
  llvm::SmallPtrSet<Operation *, 16> need;
  std::function<void(Value)> mark = [&](Value v) {
    Operation *op = v.getDefiningOp();
    if (op == nullptr ||
        (op->getBlock() != loop.getBody() && op->getBlock() != rows.getBody()) ||
        !need.insert(op).second)
      return;
    for (Value o : op->getOperands())
      mark(o);
  };
  for (Value v : slots)
    mark(v);
  IRMapping map;
  rw.setInsertionPoint(rows);
  for (Operation &op : rows.getBody()->without_terminator())
    if (need.contains(&op))
      rw.clone(op, map);
  Value zero = arith::ConstantOp::create(
      rw, loc, DenseElementsAttr::get(lanes, rw.getI32IntegerAttr(0)));
  SmallVector<Value> inits(slots.size(), zero);
  auto sumLoop = scf::ForOp::create(rw, loc, loop.getLowerBound(),
                                    loop.getUpperBound(), loop.getStep(),
                                    inits);
  {
    OpBuilder::InsertionGuard guard(rw);
    rw.setInsertionPointToStart(sumLoop.getBody());
    map.map(loop.getInductionVar(), sumLoop.getInductionVar());
    for (Operation &op : loop.getBody()->without_terminator())
      if (need.contains(&op))
        rw.clone(op, map);
    SmallVector<Value> next;
    for (size_t j = 0; j < slots.size(); j++)
      next.push_back(sums128(rw, loc, intrinsic,
                             sumLoop.getRegionIterArgs()[j],
                             map.lookup(slots[j])));
    scf::YieldOp::create(rw, loc, next);
  }
  subtractAfter(rw, loop, arg, slot,
                SmallVector<Value>(sumLoop.getResults().begin(),
                                   sumLoop.getResults().end()));
  return true;
}

// Take the 128 x sums back for the s8 x s8 dots of one loop once, after it:
// one running vpdpbusd of 0x80 bytes per distinct unshifted operand (a B
// panel, shared by every row of the register tile) carried by the loop, and
// one subtraction per accumulator after it. False (nothing changed) when
// the loop is not that shape.
static bool compensateAfterLoop(IRRewriter &rw, scf::ForOp loop,
                                ArrayRef<Pending> dots,
                                func::FuncOp intrinsic) {
  SmallVector<int> arg, slot;
  SmallVector<Value> slots;
  if (!loopShape(loop, dots, intrinsic, arg, slot, slots))
    return false;
  Location loc = loop.getLoc();
  auto lanes = VectorType::get({kLanes}, rw.getI32Type());
  rw.setInsertionPoint(loop);
  Value zero = arith::ConstantOp::create(
      rw, loc, DenseElementsAttr::get(lanes, rw.getI32IntegerAttr(0)));
  SmallVector<Value> inits(slots.size(), zero);
  unsigned nOld = loop.getNumResults();
  FailureOr<LoopLikeOpInterface> grown = loop.replaceWithAdditionalYields(
      rw, inits, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &b, Location l, ArrayRef<BlockArgument> sums) {
        SmallVector<Value> next;
        IRRewriter inner(b);
        for (size_t j = 0; j < slots.size(); j++)
          next.push_back(sums128(inner, l, intrinsic, sums[j], slots[j]));
        return next;
      });
  if (failed(grown))
    return false;
  Operation *newLoop = grown->getOperation();
  SmallVector<Value> sums;
  for (size_t j = 0; j < slots.size(); j++)
    sums.push_back(newLoop->getResult(nOld + j));
  subtractAfter(rw, newLoop, arg, slot, sums);
  return true;
}

// The same taken back from each dot where it is (no loop of that shape).
static void compensateEach(IRRewriter &rw, ArrayRef<Pending> dots,
                           func::FuncOp intrinsic) {
  for (const Pending &d : dots) {
    Location loc = d.dot->getLoc();
    rw.setInsertionPointAfter(d.dot);
    auto lanes = VectorType::get({kLanes}, rw.getI32Type());
    Value zero = arith::ConstantOp::create(
        rw, loc, DenseElementsAttr::get(lanes, rw.getI32IntegerAttr(0)));
    Value sum = sums128(rw, loc, intrinsic, zero, d.other);
    Value r = d.dot->getResult(0);
    Value fixed = arith::SubIOp::create(rw, loc, r, sum);
    rw.replaceAllUsesExcept(r, fixed, fixed.getDefiningOp());
  }
}

// Runs on a module: the intrinsic is called through a declaration of that
// name (LLVM takes a function named llvm.* for its intrinsic), which every
// later pass treats as an ordinary external call. (llvm.call_intrinsic would
// stop the buffer deallocation that runs after the schedule: it has no
// declared memory effects.)
struct VnniDotPass : PassWrapper<VnniDotPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VnniDotPass)

  StringRef getArgument() const final { return "autosched-vnni-dot"; }
  StringRef getDescription() const final {
    return "i8 x i8 -> i32 contractions of 16 lanes x 4 products as "
           "AVX512-VNNI vpdpbusd";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, func::FuncDialect, scf::SCFDialect,
                    vector::VectorDialect>();
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<vector::ContractionOp, Match>> found;
    module.walk([&](vector::ContractionOp op) {
      if (auto m = matchDot(op); succeeded(m))
        found.push_back({op, *m});
    });
    if (found.empty())
      return;
    IRRewriter rw(&getContext());
    auto lanes = VectorType::get({kLanes}, rw.getI32Type());
    auto bytes = VectorType::get({kLanes * kGroup}, rw.getI8Type());
    auto fnType = rw.getFunctionType({lanes, bytes, bytes}, {lanes});
    auto decl = module.lookupSymbol<func::FuncOp>(kIntrinsic);
    if (decl && decl.getFunctionType() != fnType) {
      decl.emitError("a symbol named ") << kIntrinsic << " of another type";
      return signalPassFailure();
    }
    if (!decl) {
      rw.setInsertionPointToStart(module.getBody());
      decl = func::FuncOp::create(rw, module.getLoc(), kIntrinsic, fnType);
      decl.setPrivate();
    }
    // s8 x s8 dots still to be corrected, by loop (nullptr: not in one).
    llvm::MapVector<Operation *, SmallVector<Pending>> pending;
    for (auto &[op, m] : found) {
      auto loop = dyn_cast<scf::ForOp>(op->getParentOp());
      if (auto p = rewriteDot(rw, op, m, decl))
        pending[loop ? loop.getOperation() : nullptr].push_back(*p);
    }
    for (auto &[loop, dots] : pending)
      if (loop == nullptr ||
          (!compensateBeforeRows(rw, cast<scf::ForOp>(loop), dots, decl) &&
           !compensateAfterLoop(rw, cast<scf::ForOp>(loop), dots, decl)))
        compensateEach(rw, dots, decl);
  }
};

} // namespace

// plugin/quantized.cpp: autosched-quantized-matmul.
void autoschedRegisterQuantizedPass();
// plugin/vectorize_rest.cpp: autosched-vectorize-rest.
void autoschedRegisterVectorizeRestPass();
// plugin/math_approx.cpp: autosched-math-approx.
void autoschedRegisterMathApproxPass();
// plugin/fuse_rows.cpp: autosched-fuse-rows.
void autoschedRegisterFuseRowsPass();
// plugin/fold_init.cpp: autosched-fold-init.
void autoschedRegisterFoldInitPass();
// plugin/vectorize_copies.cpp: autosched-vectorize-copies.
void autoschedRegisterVectorizeCopiesPass();

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "autosched", LLVM_VERSION_STRING, []() {
            PassRegistration<VnniDotPass>();
            autoschedRegisterQuantizedPass();
            autoschedRegisterVectorizeRestPass();
            autoschedRegisterMathApproxPass();
            autoschedRegisterFuseRowsPass();
            autoschedRegisterFoldInitPass();
            autoschedRegisterVectorizeCopiesPass();
          }};
}
