#include "shardplan/enums.h"

namespace shardplan {

double gemm_operand_bytes(Precision p) {
    switch (p) {
        case Precision::bf16:
        case Precision::fp16: return 2.0;
        case Precision::fp8:
        case Precision::mxfp8: return 1.0;
        case Precision::nvfp4: return 0.5 + 1.0 / 16.0;
    }
    return 2.0;
}

bool is_fp8(Precision p) { return p == Precision::fp8 || p == Precision::mxfp8; }

}  // namespace shardplan
