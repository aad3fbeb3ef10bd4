/**
 * A judged query set for `pnpm bench relevance`: queries of the kinds people type into a node
 * registry's search box, each with the packs that would satisfy the person typing it. Judged from
 * the real catalog (ComfyUI-Manager's list: names, descriptions, classes, stars) and common sense,
 * and written down before any engine was run on them; nothing here was changed to suit a result.
 *
 * `accept` holds pack ids (the real catalog's ids; a few fixture-only spellings of the same pack
 * sit beside them). `publisher`: any pack of that publisher is acceptable too (author queries).
 * `popular`: the pack most people mean, which must reach the top three.
 * A query none of whose acceptable packs is in the catalog searched is skipped and counted.
 */
export type JudgedKind = "name" | "partial" | "topic" | "class" | "author" | "need" | "typo";

export interface JudgedQuery {
  q: string;
  kind: JudgedKind;
  accept: readonly string[];
  publisher?: string;
  popular?: string;
}

const j = (kind: JudgedKind, q: string, accept: readonly string[], more: Partial<JudgedQuery> = {}): JudgedQuery => ({ q, kind, accept, ...more });

const RMBG = ["comfyui-rmbg", "bria-ai-rmbg", "inspyrenet", "rembg", "rembg-better", "comfyui-ben", "batch-rembg", "birefnet", "comfyui-removebackgroundsuite", "comfyui_birefnet_universal"];
const VIDEO_UPSCALE = ["seedvr2_videoupscaler", "comfyui-videoupscale_withmodel", "comfyui-flashvsr_ultra_fast", "comfyui-amd-video-upscaler", "comfyui-videoupscalehandfix", "comfyui-fl-diffvsr"];
const IMAGE_TO_3D = ["3dpack", "comfyui-trellis2", "comfyui-flowty-triposr", "impactframes-trellis", "comfyui-hunyuan3d-2-1", "comfyui_trellis", "comfyui-flowty-crm", "comfyui-hunyuan-3d-2", "comfyui-lux3d", "comfyui-hunyuan3d-2.1", "comfyui_hunyuan3d", "hunyuan3d-v3"];
const LIP_SYNC = ["comfyui-latentsyncwrapper", "musetalk-chaojie", "wav2lip", "latentsync", "comfyui-geeky-latentsyncwrapper", "comfyui-x-dub", "comfyui-sync-lipsync-node", "comfyui-latentsyncenhanced", "comfyui-av-latentsync", "comfyui-infinitetalk-multiimage", "musetalk-fsh", "comfyui-painterai2v", "comfyui_sonic", "echomimic"];
const TTS = ["tts-audio-suite", "vibevoice-comfyui", "comfyui-index-tts", "comfyui-vibevoice", "comfyui_indextts", "cosyvoice", "comfyui-f5-tts", "sovits", "comfyui_fill-chatterbox", "comfyui_megatts3", "comfyui-indextts2", "comfyui_stepaudiotts", "comfyui-longcat-audiodit-tts", "comfyui-voxcpm", "comfyui-sparktts", "comfyui-chatterbox", "comfyui-zonos", "comfyui-kokorotts", "comfyui-kokoro", "comfyui_fl-cosyvoice3", "higgs_v3-tts-comfyui"];
const CAPTION = ["florence2-kijai", "comfyui_slk_joy_caption_two", "comfyui-joycaption-1038lab", "llava-captioner", "comfyui-captionthis", "comfyui-joycaption", "image-captioning-in-comfyui", "miaoshouai-tagger", "wd14", "comfyui-joycaption-beta-one-gguf", "comfyui-qwenvl", "comfyui-llava-onevision"];
const FACE_SWAP = ["comfyui-reactor", "comfyui-instantid-faceswap", "facefusion_comfyui", "char-faceswap", "mtb", "deepfuze"];
const FRAME_INTERP = ["frame-interpolation", "comfyui-gimm-vfi", "comfyui-rife-tensorrt", "comfyui-vfi", "comfyui-tlbvfi", "comfyui_phaseframeinterpolation"];
const DEPTH = ["marigold", "comfyui-depthanythingv3", "depth-anything-v2", "depthcrafter-akatz-ai", "comfyui-depth-pro", "comfyui-lotus", "comfyui_controlnet_aux", "depthflow-akatz-ai"];
const UPSCALE = ["usdu", "seedvr2_videoupscaler", "supir", "nnlatent", "upscaler-tensorrt", "comfyui-clarityai", "seedvr2-tiling-upscaler", "latent-upscaler", "comfyui-tbg-etur", "comfyui-videoupscale_withmodel"];
const SEGMENT = ["segment-anything-2", "sam", "sam2", "comfyui-sam3", "yoloworld", "comfyui_segment_anything_plus", "comfyui_florence2sam2", "comfyui-samurai-sam2", "comfyui-sa2va"];
const TRANSLATE = ["translation", "comfyui-dd-translation", "comfyui_text_translation", "alekpet", "prompt-assistant", "nyjy"];
const CONTROLNET_PACKS = ["comfyui_controlnet_aux", "adv-cnet", "comfyui-advanced-controlnet", "x-flux-comfyui"];

export const JUDGED_QUERIES: readonly JudgedQuery[] = [
  // Pack names as people say them.
  j("name", "impact pack", ["comfyui-impact-pack"]),
  j("name", "comfyui manager", ["manager"]),
  j("name", "kjnodes", ["kjnodes"]),
  j("name", "ipadapter plus", ["ipadapter"]),
  j("name", "controlnet aux", ["comfyui_controlnet_aux"]),
  j("name", "controlnet preprocessors", ["comfyui_controlnet_aux"]),
  j("name", "animatediff evolved", ["ad-evolved"]),
  j("name", "rgthree", ["rgthree"]),
  j("name", "easy use", ["comfyui-easy-use"]),
  j("name", "was node suite", ["was-ns"]),
  j("name", "efficiency nodes", ["eff-nodes", "efficiency-ed"]),
  j("name", "comfyroll", ["comfyroll"]),
  j("name", "comfyui essentials", ["essentials"]),
  j("name", "custom scripts", ["comfyui-custom-scripts"]),
  j("name", "layer style", ["layerstyle", "comfyui_layerstyle_advance"]),
  j("name", "crystools", ["crytools"]),
  j("name", "gguf", ["comfyui-gguf"]),
  j("name", "ltx video", ["comfyui-ltxvideo"]),
  j("name", "hunyuan video wrapper", ["comfyui-hunyuanvideowrapper"]),
  j("name", "cogvideox wrapper", ["comfyui-cogvideoxwrapper"]),
  j("name", "florence2", ["florence2-kijai"]),
  j("name", "supir", ["supir"]),
  j("name", "reactor", ["comfyui-reactor"]),
  j("name", "instantid", ["instantid", "instantid-zho"]),
  j("name", "pulid", ["pulid", "comfyui_pulid_flux_ll", "comfyui-pulid-flux-enhanced"]),
  j("name", "ultimate sd upscale", ["usdu"]),
  j("name", "frame interpolation", ["frame-interpolation"]),
  j("name", "tinyterra nodes", ["ttn"]),
  j("name", "mtb nodes", ["mtb"]),
  j("name", "use everywhere", ["ue"]),
  j("name", "segment anything 2", ["segment-anything-2", "sam2"]),
  j("name", "wan video wrapper", ["comfyui-wanvideowrapper"], { popular: "comfyui-wanvideowrapper" }),
  j("name", "video helper suite", ["vhs"], { popular: "vhs" }),
  j("name", "3d pack", ["3dpack"]),
  j("name", "live portrait", ["advancedliveportrait", "liveportrait-kijai", "liveportrait"]),
  j("name", "inspire pack", ["inspire"]),
  j("name", "mixlab nodes", ["mixlab"]),
  j("name", "inpaint crop and stitch", ["crop-and-stitch"]),
  j("name", "inpaint nodes", ["inpaint-nodes"]),
  j("name", "advanced controlnet", ["adv-cnet", "comfyui-advanced-controlnet"]),
  j("name", "comfyui ollama", ["ollama"]),
  j("name", "llm party", ["llm-party"]),
  j("name", "fizz nodes", ["fizz"]),
  j("name", "masquerade nodes", ["masquerade"]),
  j("name", "seedvr2", ["seedvr2_videoupscaler", "seedvr2-tiling-upscaler"]),
  j("name", "comfyui rmbg", ["comfyui-rmbg"]),
  j("name", "latentsync wrapper", ["comfyui-latentsyncwrapper"]),
  j("name", "tts audio suite", ["tts-audio-suite"]),
  j("name", "lora manager", ["comfyui-lora-manager"]),
  j("name", "nunchaku", ["comfyui-nunchaku"]),
  j("name", "copilot", ["comfyui-copilot"]),
  j("name", "wd14 tagger", ["wd14"]),

  // Parts of names, and names written the way the repository spells them.
  j("partial", "video helper", ["vhs"], { popular: "vhs" }),
  j("partial", "videohelpersuite", ["vhs"], { popular: "vhs" }),
  j("partial", "VideoHelperSuite", ["vhs"], { popular: "vhs" }),
  j("partial", "wanvideo", ["comfyui-wanvideowrapper"], { popular: "comfyui-wanvideowrapper" }),
  j("partial", "WanVideoWrapper", ["comfyui-wanvideowrapper"], { popular: "comfyui-wanvideowrapper" }),
  j("partial", "impact", ["comfyui-impact-pack", "comfyui-impact-subpack"]),
  j("partial", "ipadapt", ["ipadapter", "comfyui-ipadapter-flux"]),
  j("partial", "animatediff", ["ad-evolved", "comfyui-animatediff"]),
  j("partial", "hunyuanvideo", ["comfyui-hunyuanvideowrapper"]),
  j("partial", "latentsync", ["comfyui-latentsyncwrapper", "latentsync"]),
  j("partial", "layerstyle", ["layerstyle", "comfyui_layerstyle_advance"]),
  j("partial", "cogvideo", ["comfyui-cogvideoxwrapper"]),
  j("partial", "liveportrait", ["advancedliveportrait", "liveportrait-kijai", "liveportrait"]),
  j("partial", "ltxvideo", ["comfyui-ltxvideo"]),
  j("partial", "kj nodes", ["kjnodes"]),
  j("partial", "controlnet", CONTROLNET_PACKS),
  j("partial", "essentials", ["essentials"]),
  j("partial", "easyuse", ["comfyui-easy-use"]),
  j("partial", "customscripts", ["comfyui-custom-scripts"]),
  j("partial", "sdupscale", ["usdu"]),

  // Topics.
  j("topic", "upscale", UPSCALE),
  j("topic", "face swap", FACE_SWAP),
  j("topic", "depth", DEPTH),
  j("topic", "inpaint", ["inpaint-nodes", "crop-and-stitch", "lcm-inpaint-outpaint", "comfyui-inpainteasy", "comfyui-flux-inpainting", "brushnet"]),
  j("topic", "segmentation", SEGMENT),
  j("topic", "animation", ["ad-evolved", "comfyui-animatediff", "steerable-motion", "fizz", "animateanyone-evolved", "comfyui_yvann-nodes", "comfyui_ryanontheinside"]),
  j("topic", "translation", TRANSLATE),
  j("topic", "wildcards", ["comfyui-impact-pack", "dynamicprompt", "simle-wildcard", "stable-wildcards", "prompt-wildcards", "comfyui_wildcards", "comfyui-adaptiveprompts", "chibi"]),
  j("topic", "lora training", ["comfyui-fluxtrainer", "lora-training-in-comfy", "comfyui-realtime-lora", "motionlora-trainer"]),
  j("topic", "llm", ["llm-party", "ollama", "comfyui_searge_llm", "impactframes-llm", "comfyui-ollamagemini", "comfyui_rh_llm_api", "vlm"]),
  j("topic", "audio", ["tts-audio-suite", "audio-separation-nodes-comfyui", "stableaudiosampler", "audiotools", "audioscheduler", "comfyui_yvann-nodes", "soundlab"]),
  j("topic", "tagger", ["wd14", "miaoshouai-tagger", "joytag", "comfyui-wd-timm-tagger"]),
  j("topic", "flux", ["x-flux-comfyui", "comfyui-fluxtapoz", "comfyui-fluxtrainer", "comfyui-ipadapter-flux", "comfyui_pulid_flux_ll", "comfyui-fluxext-mz"]),
  j("topic", "qwen vl", ["comfyui-qwenvl", "comfyui_qwen3-vl-instruct", "qwen-vl-api", "comfyui_object_detect_qwen_vl"]),
  j("topic", "tensorrt", ["tensorrt", "upscaler-tensorrt", "comfyui-rife-tensorrt", "comfyui-facerestore-tensorrt"]),
  j("topic", "prompt styler", ["twri-styler"]),

  // Node class names.
  j("class", "FaceDetailer", ["comfyui-impact-pack"]),
  j("class", "VHS_VideoCombine", ["vhs"]),
  j("class", "UltimateSDUpscale", ["usdu"]),
  j("class", "IPAdapterAdvanced", ["ipadapter"]),
  j("class", "Florence2Run", ["florence2-kijai"]),
  j("class", "UnetLoaderGGUF", ["comfyui-gguf"]),
  j("class", "ReActorFaceSwap", ["comfyui-reactor"]),
  j("class", "SeedVR2VideoUpscaler", ["seedvr2_videoupscaler"]),
  j("class", "LatentSyncNode", ["comfyui-latentsyncwrapper"]),
  j("class", "Sam2Segmentation", ["segment-anything-2"]),
  j("class", "GetImageSizeAndCount", ["kjnodes"]),
  j("class", "Efficient Loader", ["eff-nodes", "efficiency-ed"]),
  j("class", "CR Apply LoRA Stack", ["comfyroll"]),
  j("class", "Image Remove Background (rembg)", ["rembg", "rembg-better", "batch-rembg"]),
  j("class", "WD14Tagger", ["wd14"]),
  j("class", "DepthAnythingPreprocessor", ["comfyui_controlnet_aux"]),
  j("class", "ACN_AdvancedControlNetApply", ["adv-cnet", "comfyui-advanced-controlnet"]),

  // Authors and publishers.
  j("author", "kijai", [], { publisher: "kijai" }),
  j("author", "cubiq", [], { publisher: "cubiq" }),
  j("author", "ltdrdata", [], { publisher: "ltdrdata" }),
  j("author", "kosinkadink", [], { publisher: "kosinkadink" }),
  j("author", "pythongosssss", [], { publisher: "pythongosssss" }),
  j("author", "fannovel16", [], { publisher: "fannovel16" }),
  j("author", "city96", [], { publisher: "city96" }),
  j("author", "1038lab", [], { publisher: "1038lab" }),
  j("author", "chflame163", [], { publisher: "chflame163" }),
  j("author", "smthemex", [], { publisher: "smthemex" }),

  // Needs described in words.
  j("need", "remove background", RMBG, { popular: "comfyui-rmbg" }),
  j("need", "background removal", RMBG, { popular: "comfyui-rmbg" }),
  j("need", "video upscale", VIDEO_UPSCALE, { popular: "seedvr2_videoupscaler" }),
  j("need", "image to 3d", IMAGE_TO_3D, { popular: "3dpack" }),
  j("need", "lip sync", LIP_SYNC, { popular: "comfyui-latentsyncwrapper" }),
  j("need", "text to speech", TTS, { popular: "tts-audio-suite" }),
  j("need", "image captioning", CAPTION, { popular: "florence2-kijai" }),
  j("need", "video helper nodes", ["vhs"], { popular: "vhs" }),
  j("need", "swap faces", FACE_SWAP),
  j("need", "restore faces", ["face-cf", "comfyui-gpeno", "comfyui-facerestore-tensorrt", "comfyui_faceenhancer", "face_restorer", "comfyui-reactor"]),
  j("need", "upscale image", ["usdu", "supir", "upscaler-tensorrt", "comfyui-clarityai", "seedvr2-tiling-upscaler", "nnlatent", "comfyui-tbg-etur"]),
  j("need", "depth map", DEPTH),
  j("need", "pose estimation", ["comfyui_controlnet_aux", "comfyui_sapiens", "comfyui-scail-pose", "musepose", "comfyui-sam3dbody"]),
  j("need", "interpolate frames", FRAME_INTERP),
  j("need", "voice cloning", ["comfyui_indextts", "comfyui-voxcpm", "sovits", "comfyui_fill-chatterbox", "comfyui_megatts3", "comfyui-indextts2", "tts-audio-suite", "comfyui-longcat-audiodit-tts", "comfyui_fl-cosyvoice3"]),
  j("need", "speech to text", ["whisper", "whisperx", "comfyui-qwenasr", "comfyui-qwen3-asr", "transcription-tools"]),
  j("need", "object detection", ["florence2-kijai", "yoloworld", "comfy-yolo", "comfyui_object_detect_qwen_vl"]),
  j("need", "translate prompts", TRANSLATE),
  j("need", "color correction", ["comfyui-easycolorcorrector", "comfyui-diffusion-cg", "comfyui-darkroom", "comfyui-propost", "mtb", "alekpet"]),
  j("need", "film grain", ["vrgamedev_video_nodes", "comfyui-propost", "comfyui-rndnanthu", "comfyui-advanced-photo-grain", "comfyui-coloristfilmgrain"]),
  j("need", "style transfer", ["comfyui-krea2-styletransfer", "fast-style-transfer", "comfyebsynth", "visual-style-prompting", "comfyui_flux_style_adjust"]),
  j("need", "image to video", ["easyanimatenodes", "comfyui-painteri2v", "ruyi-models", "comfyui_turbodiffusion", "comfyui-painteri2vadvanced", "comfyui-ltxvideo", "comfyui-wanvideowrapper", "comfyui-cogvideoxwrapper", "dynamicrafter-kijai"]),
  j("need", "talking head", ["comfyui_sonic", "echomimic", "hallo", "comfyui-float", "impactframes-memoavatar", "advancedliveportrait", "comfyui_rh_flashhead"]),
  j("need", "music generation", ["comfyui_ace-step", "comfyui_yue", "comfyui_songgeneration", "comfyui_diffrhythm", "soundlab", "comfyui_fl-heartmula", "comfyui_fl-songgen"]),
  j("need", "download models", ["model-downloader", "civicomfy", "comfyui_huggingface_downloader", "manager", "comfyui-lora-manager"]),
  j("need", "resource monitor", ["crytools"]),
  j("need", "separate audio stems", ["audio-separation-nodes-comfyui", "comfyui-melbandroformer"]),
  j("need", "watermark", ["comfyui-watermark-detection", "comfyui-kimara-ai-advanced-watermarks", "blind_watermark_comfyui", "comfyui-blindwatermark", "comfyui-camera-watermark", "comfyui-remove-ai-watermarks", "comfyui-unwatermark"]),
  j("need", "outpainting", ["comfyui-diffusersimageoutpaint", "lcm-inpaint-outpaint", "layerforge", "comfyui-pixaroma", "sai-api"]),
  j("need", "photoshop", ["comfy-photoshop", "sd-ppp", "layerstyle"]),

  // Typos.
  j("typo", "impcat pack", ["comfyui-impact-pack"]),
  j("typo", "ipadaptr", ["ipadapter"]),
  j("typo", "contrlnet aux", ["comfyui_controlnet_aux"]),
  j("typo", "animatedif evolved", ["ad-evolved"]),
  j("typo", "vidoe helper suite", ["vhs"]),
  j("typo", "florance2", ["florence2-kijai"]),
  j("typo", "efficency nodes", ["eff-nodes", "efficiency-ed"]),
  j("typo", "ultimate sd upscaler", ["usdu"]),
  j("typo", "segment anyting", ["segment-anything-2", "sam", "sam2"]),
  j("typo", "remove backround", RMBG),
  j("typo", "lipsync", LIP_SYNC),
  j("typo", "comfy roll", ["comfyroll"]),
  j("typo", "wan vidoe wrapper", ["comfyui-wanvideowrapper"]),
  j("typo", "kjnode", ["kjnodes"]),
  j("typo", "rgthre", ["rgthree"]),
  j("typo", "crystol", ["crytools"]),
];
