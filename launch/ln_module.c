/* Loading a generated kernel's module: the dynamic shared memory opt-in is set here, once per
 * module, so no launch ever sets an attribute. */
#include "ln_internal.h"

CUresult ln_module_load(const cu_driver *cu, const gen_config *c, const void *image, CUmodule *module,
                        const char **what)
{
    *module = NULL;
    *what = "cuModuleLoadData";
    CUresult rc = cu->ModuleLoadData(module, image);
    if (rc != CUDA_SUCCESS) {
        *module = NULL;
        return rc;
    }
    const gen_family *f = c->family;
    for (int i = 0; i < f->entry_count; i++) {
        const gen_entry *e = &f->entries[i];
        const size_t smem = e->smem_bytes ? e->smem_bytes(c->p) : 0;
        /* Entries not launched are compiled out of the module: only used ones are looked up. */
        if (smem <= LN_SMEM_DEFAULT || !gen_entry_used(c, e))
            continue;
        CUfunction fn;
        if ((rc = cu->ModuleGetFunction(&fn, *module, e->name)) != CUDA_SUCCESS) {
            *what = "cuModuleGetFunction";
            break;
        }
        if ((rc = cu->FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem)) !=
            CUDA_SUCCESS) {
            *what = "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)";
            break;
        }
    }
    if (rc != CUDA_SUCCESS) {
        cu->ModuleUnload(*module);
        *module = NULL;
        return rc;
    }
    *what = NULL;
    return CUDA_SUCCESS;
}
