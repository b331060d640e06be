// autosched-fuse-rows{rows=R}: a dispatch of row-wise linalg ops (a
// softmax: a transposed mask add, the max, exp, sum and division; a layer
// norm) run as one loop over blocks of rows instead of one pass over memory
// per op. Runs on tensors, before bufferization, on the functions the
// outliner marked autosched.rows (analysis/outline.c: a group of generics
// and fills, a reduction among them, whose values are used only inside it
// but for the last one's).
//
// The ops' leading loop dims that are parallel in every op and index every
// result the same way (the rows: a softmax's head and row) are tiled, the
// innermost of them by R rows (1 for the others), in one scf.forall (the
// rest's threads, as the schedules' foralls are); inside, each op once on
// its tile, in order, each reading the tiles the ops before it made (tile
// sized values, which bufferize to small buffers that stay in cache), the
// last one's tile inserted into the result. Nothing is computed twice (as
// tile-and-fuse would for a value two ops read) and no op's order of
// operations changes: each element is computed as before, so results are
// bit for bit the same. The tiled ops are marked autosched.rows_tile for
// autosched-vectorize-rest, which vectorizes them where they are. A
// function that does not fit (dynamic or uneven ranges, a use the rows do
// not line up with) is left as it is: never an error.

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {

// The leading loop dims of op that are parallel and index its result in
// order (result dim k is loop dim k), at most max.
static int64_t leadingRows(linalg::LinalgOp op, int64_t max) {
  if (op->getNumResults() != 1 || op.getNumDpsInits() != 1)
    return 0;
  SmallVector<utils::IteratorType> it = op.getIteratorTypesArray();
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  int64_t p = 0;
  while (p < max && p < (int64_t)it.size() &&
         p < (int64_t)out.getNumResults() &&
         it[p] == utils::IteratorType::parallel &&
         out.getResult(p) == getAffineDimExpr(p, op.getContext()))
    p++;
  return p;
}

// Whether operand o of consumer c reads a value of the group through its
// first p loop dims in order and no other dim of it depends on them: the
// consumer's tile then reads exactly the producer's tile.
static bool readsRows(linalg::LinalgOp c, OpOperand *o, int64_t p) {
  AffineMap m = c.getMatchingIndexingMap(o);
  if ((int64_t)m.getNumResults() < p)
    return false;
  for (int64_t k = 0; k < (int64_t)m.getNumResults(); k++) {
    AffineExpr e = m.getResult(k);
    if (k < p) {
      if (e != getAffineDimExpr(k, c.getContext()))
        return false;
      continue;
    }
    for (int64_t d = 0; d < p; d++)
      if (e.isFunctionOfDim(d))
        return false;
  }
  return true;
}

struct FuseRowsPass : PassWrapper<FuseRowsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuseRowsPass)

  FuseRowsPass() = default;
  FuseRowsPass(const FuseRowsPass &other) : PassWrapper(other) {}

  Option<int64_t> rows{*this, "rows",
                       llvm::cl::desc("rows of the innermost row dim a tile"),
                       llvm::cl::init(16)};

  StringRef getArgument() const final { return "autosched-fuse-rows"; }
  StringRef getDescription() const final {
    return "row-wise linalg ops (softmax, norms) as one scf.forall over "
           "blocks of rows, each op once a tile";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, scf::SCFDialect,
                    tensor::TensorDialect>();
  }

  // The ops and the row dims they share (0: they do not fit).
  int64_t rowDims(ArrayRef<linalg::LinalgOp> ops) {
    llvm::SmallPtrSet<Operation *, 16> in;
    for (linalg::LinalgOp op : ops)
      in.insert(op.getOperation());
    int64_t p = 8;
    SmallVector<int64_t> ranges;
    for (linalg::LinalgOp op : ops) {
      p = leadingRows(op, p);
      SmallVector<int64_t> r = op.getStaticLoopRanges();
      if (llvm::any_of(r, ShapedType::isDynamic))
        return 0;
      if (ranges.empty())
        ranges = r;
      for (int64_t k = 0; k < p && k < (int64_t)ranges.size(); k++)
        if (r[k] != ranges[k])
          return 0;
    }
    // The result's init made outside the group (the forall's shared one).
    linalg::LinalgOp last = ops.back();
    Operation *init = last.getDpsInitOperand(0)->get().getDefiningOp();
    if (p < 1 || (init && in.contains(init)))
      return 0;
    // Every use of a group value: inside the group, lined up with the rows
    // (the last op's result alone goes out).
    for (linalg::LinalgOp op : ops) {
      for (OpOperand &u : op->getResult(0).getUses()) {
        auto c = dyn_cast<linalg::LinalgOp>(u.getOwner());
        if (!c || !in.contains(c.getOperation())) {
          if (op != ops.back())
            return 0;
          continue;
        }
        if (!readsRows(c, &u, p))
          return 0;
      }
    }
    // The innermost row dim in whole tiles (static tile shapes).
    if (ranges[p - 1] % std::min<int64_t>(rows, ranges[p - 1]) != 0)
      return 0;
    return p;
  }

  // Each op of ops once on the tile at ivs (p row dims, steps), in order,
  // reading the tiles before it; the last op's tile. Null on failure.
  // keep: the result's init, whose slices stay (the last op writes there).
  Value tileOps(IRRewriter &rw, ArrayRef<linalg::LinalgOp> ops, ValueRange ivs,
                ArrayRef<int64_t> steps, Value keep,
                DenseMap<Value, Value> &tiles) {
    for (linalg::LinalgOp op : ops) {
      SmallVector<int64_t> r = op.getStaticLoopRanges();
      SmallVector<OpFoldResult> offs, sizes;
      for (size_t k = 0; k < r.size(); k++) {
        bool row = k < ivs.size();
        offs.push_back(row ? OpFoldResult(ivs[k]) : rw.getIndexAttr(0));
        sizes.push_back(rw.getIndexAttr(row ? steps[k] : r[k]));
      }
      FailureOr<TilingResult> t =
          cast<TilingInterface>(op.getOperation())
              .getTiledImplementation(rw, offs, sizes);
      if (failed(t) || t->tiledOps.size() != 1 || t->tiledValues.size() != 1)
        return Value();
      Operation *tiled = t->tiledOps.front();
      // A slice of a group value: that value's tile instead; a slice of an
      // empty tensor: an empty tile (a buffer of the tile's size).
      for (OpOperand &o : tiled->getOpOperands()) {
        auto s = o.get().getDefiningOp<tensor::ExtractSliceOp>();
        if (!s)
          continue;
        auto it = tiles.find(s.getSource());
        if (it != tiles.end()) {
          if (it->second.getType() != s.getType())
            return Value();
          o.set(it->second);
        } else if (s.getSource().getDefiningOp<tensor::EmptyOp>() &&
                   s.getType().hasStaticShape() && s.getSource() != keep) {
          OpBuilder::InsertionGuard g(rw);
          rw.setInsertionPoint(tiled);
          o.set(tensor::EmptyOp::create(rw, s.getLoc(),
                                        s.getType().getShape(),
                                        s.getType().getElementType()));
        } else {
          continue;
        }
        if (s->use_empty())
          rw.eraseOp(s);
      }
      tiled->setAttr("autosched.rows_tile", rw.getUnitAttr());
      tiles[op->getResult(0)] = t->tiledValues.front();
    }
    return tiles[ops.back()->getResult(0)];
  }

  void runOnOperation() override {
    func::FuncOp f = getOperation();
    if (!f->hasAttr("autosched.rows") || f.getBody().empty())
      return;
    SmallVector<linalg::LinalgOp> ops;
    for (Operation &o : f.getBody().front())
      if (auto l = dyn_cast<linalg::LinalgOp>(&o))
        ops.push_back(l);
    if (ops.size() < 2)
      return;
    int64_t p = rowDims(ops);
    if (p < 1)
      return;
    linalg::LinalgOp last = ops.back();
    SmallVector<int64_t> r = last.getStaticLoopRanges();
    SmallVector<int64_t> steps(p, 1);
    steps[p - 1] = std::min<int64_t>(rows, r[p - 1]);
    IRRewriter rw(&getContext());
    Location loc = last.getLoc();
    rw.setInsertionPoint(last);
    SmallVector<OpFoldResult> lbs(p, rw.getIndexAttr(0)), ubs, st;
    for (int64_t k = 0; k < p; k++) {
      ubs.push_back(rw.getIndexAttr(r[k]));
      st.push_back(rw.getIndexAttr(steps[k]));
    }
    Value init = last.getDpsInitOperand(0)->get();
    auto forall = scf::ForallOp::create(rw, loc, lbs, ubs, st, ValueRange{init},
                                        std::nullopt);
    Block *body = forall.getBody();
    rw.setInsertionPointToStart(body);
    DenseMap<Value, Value> tiles;
    Value tile =
        tileOps(rw, ops, forall.getInductionVars(), steps, init, tiles);
    if (!tile) {
      rw.eraseOp(forall);
      return;
    }
    // The last tile into the result, where the last op writes it.
    SmallVector<OpFoldResult> offs, sizes, roffs, rsizes;
    for (size_t k = 0; k < r.size(); k++) {
      bool row = (int64_t)k < p;
      offs.push_back(row ? OpFoldResult(forall.getInductionVars()[k])
                         : rw.getIndexAttr(0));
      sizes.push_back(rw.getIndexAttr(row ? steps[k] : r[k]));
    }
    if (failed(cast<TilingInterface>(last.getOperation())
                   .getResultTilePosition(rw, 0, offs, sizes, roffs,
                                          rsizes))) {
      rw.eraseOp(forall);
      return;
    }
    auto ty = cast<RankedTensorType>(init.getType());
    SmallVector<OpFoldResult> ones(ty.getRank(), rw.getIndexAttr(1));
    rw.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(rw, loc, tile,
                                          body->getArguments().back(), roffs,
                                          rsizes, ones);
    // The last op writes its tile into the forall's shared result.
    Value shared = body->getArguments().back();
    forall.getBody()->walk([&](tensor::ExtractSliceOp s) {
      if (s.getSource() == init)
        s.getSourceMutable().assign(shared);
    });
    rw.replaceAllUsesWith(last->getResult(0), forall.getResult(0));
    for (linalg::LinalgOp op : llvm::reverse(ops))
      rw.eraseOp(op);
  }
};

} // namespace

void autoschedRegisterFuseRowsPass() { PassRegistration<FuseRowsPass>(); }
