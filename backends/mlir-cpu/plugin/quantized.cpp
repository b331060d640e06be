// autosched-quantized-matmul: linalg.quantized_matmul and
// linalg.quantized_batch_matmul on tensors become the int8 matmul autosched
// tunes plus the zero-point corrections:
//
//   C + sum_k (A - za)(B - zb)
//     = (C + sum_k A B) - zb * rowsum(A) - za * colsum(B) + K * za * zb
//
// The first term is a linalg.matmul (linalg.batch_matmul) of i8 inputs into
// the i32 accumulator, marked autosched.core: the op a schedule tiles,
// packs and vectorizes like any other int8 matmul (the dot kernels
// included). The sums of A's rows and B's columns are two reductions (M·K
// and K·N work), the correction one elementwise op over C; all wrap in i32
// as the quantized op's arithmetic does, so the result is the same integer
// for every input. Ops on memrefs are left as they are.

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {

// The value v (an integer scalar) widened or narrowed to type to.
static Value toType(OpBuilder &b, Location loc, Value v, Type to) {
  unsigned from = v.getType().getIntOrFloatBitWidth();
  unsigned w = to.getIntOrFloatBitWidth();
  if (from < w)
    return arith::ExtSIOp::create(b, loc, to, v);
  if (from > w)
    return arith::TruncIOp::create(b, loc, to, v);
  return v;
}

// Sums of `in` along its dim `dim` (0-based among its dims), widened signed
// into `elem`: a tensor of in's shape without that dim.
static Value sums(IRRewriter &rw, Location loc, Value in, int64_t dim,
                  Type elem) {
  auto ty = cast<RankedTensorType>(in.getType());
  int64_t rank = ty.getRank();
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iters;
  for (int64_t i = 0; i < rank; i++) {
    if (i == dim) {
      iters.push_back(utils::IteratorType::reduction);
      continue;
    }
    shape.push_back(ty.getDimSize(i));
    outExprs.push_back(rw.getAffineDimExpr(i));
    iters.push_back(utils::IteratorType::parallel);
  }
  auto outTy = RankedTensorType::get(shape, elem);
  Value zero = arith::ConstantOp::create(rw, loc, rw.getIntegerAttr(elem, 0));
  Value empty = tensor::EmptyOp::create(rw, loc, shape, elem);
  Value init = linalg::FillOp::create(rw, loc, ValueRange{zero},
                                      ValueRange{empty})
                   .getResult(0);
  SmallVector<AffineMap> maps = {
      rw.getMultiDimIdentityMap(rank),
      AffineMap::get(rank, 0, outExprs, rw.getContext())};
  auto g = linalg::GenericOp::create(
      rw, loc, TypeRange{outTy}, ValueRange{in}, ValueRange{init}, maps,
      iters, [&](OpBuilder &b, Location l, ValueRange args) {
        Value x = toType(b, l, args[0], elem);
        Value s = arith::AddIOp::create(b, l, args[1], x);
        linalg::YieldOp::create(b, l, s);
      });
  return g.getResult(0);
}

// Rewrite one quantized op; failure leaves it as it is.
static LogicalResult decompose(IRRewriter &rw, linalg::LinalgOp op,
                               bool batch) {
  if (!op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
      op.getNumDpsInputs() != 4 || op.getNumDpsInits() != 1)
    return failure();
  Location loc = op.getLoc();
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1];
  Value za = op.getDpsInputs()[2], zb = op.getDpsInputs()[3];
  Value c = op.getDpsInits()[0];
  auto aty = dyn_cast<RankedTensorType>(a.getType());
  auto cty = dyn_cast<RankedTensorType>(c.getType());
  if (!aty || !cty || !aty.hasStaticShape() || !cty.hasStaticShape() ||
      !isa<IntegerType>(cty.getElementType()) ||
      !isa<IntegerType>(za.getType()) || !isa<IntegerType>(zb.getType()))
    return failure();
  Type acc = cty.getElementType();
  int64_t nb = batch ? 1 : 0;
  int64_t k = aty.getDimSize(nb + 1);

  rw.setInsertionPoint(op);
  Operation *core;
  if (batch)
    core = linalg::BatchMatmulOp::create(rw, loc, TypeRange{cty},
                                         ValueRange{a, b}, ValueRange{c});
  else
    core = linalg::MatmulOp::create(rw, loc, TypeRange{cty}, ValueRange{a, b},
                                    ValueRange{c});
  core->setAttr("autosched.core", rw.getUnitAttr());
  Value rows = sums(rw, loc, a, nb + 1, acc); // [b][m]
  Value cols = sums(rw, loc, b, nb, acc);     // [b][n]

  // C' = core - zb * rows[m] - za * cols[n] + K * za * zb
  int64_t rank = nb + 2;
  AffineExpr bd = rw.getAffineDimExpr(0);
  AffineExpr m = rw.getAffineDimExpr(nb), n = rw.getAffineDimExpr(nb + 1);
  SmallVector<AffineExpr> re = batch ? SmallVector<AffineExpr>{bd, m}
                                     : SmallVector<AffineExpr>{m};
  SmallVector<AffineExpr> ce = batch ? SmallVector<AffineExpr>{bd, n}
                                     : SmallVector<AffineExpr>{n};
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank, 0, re, rw.getContext()),
      AffineMap::get(rank, 0, ce, rw.getContext()),
      AffineMap::get(rank, 0, {}, rw.getContext()),
      AffineMap::get(rank, 0, {}, rw.getContext()),
      rw.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto fix = linalg::GenericOp::create(
      rw, loc, TypeRange{cty}, ValueRange{rows, cols, za, zb},
      ValueRange{core->getResult(0)}, maps, iters,
      [&](OpBuilder &bb, Location l, ValueRange args) {
        Value zA = toType(bb, l, args[2], acc);
        Value zB = toType(bb, l, args[3], acc);
        Value kk = arith::ConstantOp::create(bb, l,
                                             bb.getIntegerAttr(acc, k));
        Value t1 = arith::MulIOp::create(bb, l, zB, args[0]);
        Value t2 = arith::MulIOp::create(bb, l, zA, args[1]);
        Value t3 = arith::MulIOp::create(
            bb, l, kk, arith::MulIOp::create(bb, l, zA, zB));
        Value v = arith::SubIOp::create(bb, l, args[4], t1);
        v = arith::SubIOp::create(bb, l, v, t2);
        v = arith::AddIOp::create(bb, l, v, t3);
        linalg::YieldOp::create(bb, l, v);
      });
  rw.replaceOp(op, fix.getResult(0));
  return success();
}

struct QuantizedPass
    : PassWrapper<QuantizedPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(QuantizedPass)

  StringRef getArgument() const final { return "autosched-quantized-matmul"; }
  StringRef getDescription() const final {
    return "quantized (batch) matmuls as an int8 matmul (autosched.core) "
           "plus zero-point corrections";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, linalg::LinalgDialect,
                    tensor::TensorDialect>();
  }
  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, bool>> found;
    getOperation().walk([&](Operation *op) {
      if (auto q = dyn_cast<linalg::QuantizedMatmulOp>(op))
        found.push_back({cast<linalg::LinalgOp>(op), false});
      else if (auto q = dyn_cast<linalg::QuantizedBatchMatmulOp>(op))
        found.push_back({cast<linalg::LinalgOp>(op), true});
    });
    IRRewriter rw(&getContext());
    for (auto &[op, batch] : found)
      (void)decompose(rw, op, batch);
  }
};

} // namespace

void autoschedRegisterQuantizedPass() { PassRegistration<QuantizedPass>(); }
