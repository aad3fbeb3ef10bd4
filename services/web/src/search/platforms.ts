/** The filter values the engine knows synonyms for (services/search: platform-values). */
export const OS_CHOICES = ["Windows", "Linux", "macOS"] as const;
export const ACCELERATOR_CHOICES = ["CUDA", "ROCm", "Metal"] as const;
export const PAGE_SIZES = [10, 20, 50, 100] as const;
