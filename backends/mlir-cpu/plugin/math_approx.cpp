// autosched-math-approx: `autosched build --math fast`. The f32 math ops
// LLVM would run as one libm call per vector lane (exp, log, erf, tanh and
// their kin expm1, log1p, log2) become MLIR's own polynomial approximations
// (upstream populateMathPolynomialApproximationPatterns): arith and vector
// code, as wide as the op's vectors. Their error bounds are stated and
// checked against libm by tests/export/test_build_math.sh.
//
// MLIR's log reads its input's exponent from the bits, which is wrong for
// denormals (off by up to 2e6 ulp at 2^-149): the pass scales them by 2^23
// first and takes 23 ln 2 (log2: 23) off the result.
//
// Runs after the rest's vectorization, before the vector dialect is taken
// to LLVM. Ops of other types and other math ops are left as they are
// (convert-math-to-llvm and convert-math-to-libm take them, as in
// --math exact).

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/STLExtras.h"

#include <cfloat>

using namespace mlir;

namespace {

struct MathApproxPass
    : PassWrapper<MathApproxPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MathApproxPass)

  StringRef getArgument() const final { return "autosched-math-approx"; }
  StringRef getDescription() const final {
    return "f32 exp, log, erf, tanh (expm1, log1p, log2) as MLIR's "
           "polynomial approximations instead of libm calls";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, math::MathDialect,
                    vector::VectorDialect>();
  }

  // A denormal x of op (log or log2 on f32) scaled to a normal one, and
  // the scale's log taken off op's result.
  template <typename LogOp> static void scaleDenormals(LogOp op, double off) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Type t = op.getType();
    auto splat = [&](double v) -> Value {
      auto f = b.getF32FloatAttr((float)v);
      if (auto vt = dyn_cast<VectorType>(t))
        return arith::ConstantOp::create(b, loc, vt,
                                         DenseElementsAttr::get(vt, f));
      return arith::ConstantOp::create(b, loc, f);
    };
    Value x = op.getOperand(), zero = splat(0.0);
    Value tiny = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                       math::AbsFOp::create(b, loc, x),
                                       splat(FLT_MIN));
    Value scaled = arith::MulFOp::create(b, loc, x, splat(8388608.0));
    Value in = arith::SelectOp::create(b, loc, tiny, scaled, x);
    Value sub = arith::SelectOp::create(b, loc, tiny, splat(off), zero);
    auto log = LogOp::create(b, loc, in);
    Value out = arith::SubFOp::create(b, loc, log, sub);
    op.replaceAllUsesWith(out);
    op.erase();
  }

  static bool isF32(Type t) { return getElementTypeOrSelf(t).isF32(); }

  void runOnOperation() override {
    SmallVector<math::LogOp> logs;
    SmallVector<math::Log2Op> log2s;
    getOperation().walk([&](Operation *op) {
      if (auto l = dyn_cast<math::LogOp>(op); l && isF32(l.getType()))
        logs.push_back(l);
      if (auto l = dyn_cast<math::Log2Op>(op); l && isF32(l.getType()))
        log2s.push_back(l);
    });
    for (math::LogOp l : logs)
      scaleDenormals(l, 23.0 * 0.69314718055994530942);
    for (math::Log2Op l : log2s)
      scaleDenormals(l, 23.0);

    // Not rsqrt: convert-math-to-llvm already makes it 1 / sqrt on whole
    // vectors, correctly rounded but for the division.
    static const StringRef ops[] = {
        math::ExpOp::getOperationName(),   math::ExpM1Op::getOperationName(),
        math::LogOp::getOperationName(),   math::Log1pOp::getOperationName(),
        math::Log2Op::getOperationName(),  math::ErfOp::getOperationName(),
        math::TanhOp::getOperationName()};
    RewritePatternSet p(&getContext());
    populateMathPolynomialApproximationPatterns(
        p, [](StringRef name) { return llvm::is_contained(ops, name); });
    if (failed(applyPatternsGreedily(getOperation(), std::move(p))))
      signalPassFailure();
  }
};

} // namespace

void autoschedRegisterMathApproxPass() { PassRegistration<MathApproxPass>(); }
