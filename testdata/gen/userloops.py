#!/usr/bin/env python3
"""userloops: a second labelled corpus for graphdiff, written the way users
write their training loops and dumps (the first corpus, testdata/corpus, is
one harness's habits: every dump from step 0 and identical weights, buffers
under params/, loss + grads + params in the helper's layout every step).

Usage (from the repository root):

    python3 testdata/gen/userloops.py [--out testdata/userloops] [--only NAME,...] [--cpu] [--list]
    python3 testdata/gen/userloops.py --curves --out testdata/curves/userloops   # the loss-curve pairs
    bash testdata/gen/userloops_pack.sh OUT DEST     # OUT packed into <= 8 .tar.xz parts of <= 15 MB

On a CUDA machine (PyTorch 2.x, numpy, safetensors), e.g.:

    python3 testdata/gen/userloops.py --out /tmp/ul 2>&1 | tee $OUT/userloops_stdout.log
    bash testdata/gen/userloops_pack.sh /tmp/ul $OUT

Writes OUT/<family>/<scenario>/{eager,graph,label.json,measured.json},
OUT/README.md (one row per scenario) and OUT/userloops.log.

How the runs are made
- Thirteen model families the first corpus lacks: vit (patch embedding, pre-LN
  encoder, classification), resnet_bn (residual convs with BatchNorm, SGD
  momentum), unet_gn (a small conv UNet with GroupNorm trained as a diffusion
  denoiser, fp32 EMA weights), moe (a tiny LM whose MLP is a mixture of
  experts with top-1/top-2 routing and a load-balancing loss) and kv_decoder
  (greedy decoding of a tiny causal transformer with a static KV cache,
  graphed per decode step; inference only), and tcn (a temporal conv net
  classifying 2-channel signals: dilated Conv1d residual blocks with
  LayerNorm and GELU, label smoothing, SGD momentum), added after the
  detectors were written, and tab (categorical embeddings beside numeric
  columns, BatchNorm1d, SiLU MLP, binary cross-entropy, AdamW), added after
  they were revised on tcn, and vae (a variational autoencoder: Gaussian
  latent, reparameterised sample, reconstruction plus beta times KL, Adam),
  added after they were revised on tab, and clr (a contrastive encoder:
  InfoNCE between two noisy views of the batch, a temperature, AdamW),
  added after they were revised on vae, and gnn (graph classification of
  small graphs given as a dense normalised adjacency: two graph
  convolutions with a residual and LayerNorm, mean over the nodes, Adam),
  added after they were revised on clr and scored before any change; and
  infer (not a model but a use: the resnet_bn and tab checkpoints served
  in eval mode, one captured forward per batch, logits and probabilities
  at a temperature the only dumps), added after the revision on gnn and
  scored before any change; and gru (a sequence classifier: token
  embeddings, a GRU cell unrolled over 12 positions, LayerNorm on the last
  state, Adam), added after captured_scalar read served outputs and scored
  before any change; and lstm (a token language model trained with
  truncated backpropagation through time, the LSTM cell's state carried
  from batch to batch in buffers the model writes in place, AdamW), added
  after gru and scored before any change; and convnext (a 2×2 patchify
  stem, two ConvNeXt blocks: a depthwise 3×3 convolution, LayerNorm
  channels last, a ×4 GELU MLP, a layer scale started at 1e-6, stochastic
  depth; AdamW), added after optimizerStep and scored before any change.
- PyTorch's whole-network capture recipe: three warm-up iterations on a side
  stream (not undone: they are training steps), optimizer.zero_grad(
  set_to_none=True), torch.cuda.graph capture of forward, backward and
  optimizer.step() on static inputs, then static_x.copy_(batch); g.replay()
  per step. Adam/AdamW graphed with capturable=True (a tensor learning rate
  where a schedule moves it), eager with foreach. The eager run takes the
  same warm-up iterations, so the first dumped step is not the first
  training step and parameters already differ legitimately. Some scenarios
  graph the model alone with torch.cuda.make_graphed_callables (optimizer
  and EMA eager).
- Most runs resume: each family is trained eagerly from scratch for
  800-1200 steps, torch.save'd (model, optimizer, EMA, step), and both runs
  load that checkpoint and go on; files are named by the real global step
  (step_1003.pt). Recipe runs from scratch number the warm-up steps 0-2.
- Dump styles, one per scenario: torch.save({"model": state_dict, "grads":
  {...}, "loss": loss}) per step in a flat directory (BatchNorm buffers and
  num_batches_tracked inside model/); np.savez per step ("grads/<n>",
  "params/<n>", "loss" from loss.item(); bf16 saved with .float()); one
  safetensors file per kind in per-step directories (step_001003/ or
  global_step1003/); params-only checkpoints (ckpt_<k>.pt state_dict,
  model_<k>.safetensors, EMA as ema.* entries); outputs-only decode dumps
  (logits and int64 token ids per decode position: pos_<t>.pt, gen_<t>.npz,
  step_<t>/outputs.safetensors); the graphdiff_dump helper's tree and a
  hand-written .npy tree with buffers/ and ema/.
- Precision: fp32 (TF32 off), TF32 (on in both runs), pure bf16 parameters,
  bf16 autocast (label compute_dtype "bf16"), pure fp16 (served models and
  decoding only).

Bugs (label causes = the cause IDs a correct diagnosis may name):
stale_input (static_x = x), input_lag (copy after replay), grad_accumulation
(no zero_grad(set_to_none=True) before capture: the captured backward adds
to the warm-up's gradients), output_aliasing (dumps deferred to the end of
the run holding references to static grads/loss/logits), uninitialized_memory
(torch.empty read before written: the MoE combine buffer, a padded-vocab
logits buffer), captured_scalar (a scheduler's float lr, a BatchNorm momentum
set after capture, an EMA decay switched after capture, an aux-loss weight, a
decode position as a Python int), captured_branch (an aux loss on `if step <
k`), frozen_rng (a mixup lambda, a diffusion timestep drawn in Python, noise
drawn with numpy into a pinned buffer inside the step), autocast_cache (one
autocast region with its cache around warm-up and capture), dynamic_shape
(an epoch's partial last batch copied into the static input's first rows).
Several start after the first dumped step (a change at step 1005, 1205, 806).

Scenarios (`--list` prints them; "ok" = correct, verdict pass):

  vit_recipe_fp32_ok                ok  the recipe from step 0, Adam, fp32, torch.save dict per step
  vit_resume_autocast_cosine_ok     ok  resume at 1000, autocast, AdamW with a cosine lr (tensor), clipping,
                                        np.savez per step
  vit_resume_bf16_dropout_ok        ok  resume, pure bf16, dropout 0.1 (graph-safe RNG), safetensors per kind
                                        in global_step<k>/, warm-up dumped
  vit_callables_tf32_ok             ok  make_graphed_callables on the model, TF32 in both, params-only
                                        ckpt_<k>.pt every 2 steps
  vit_resume_dropout_helper_ok      ok  resume, fp32, dropout 0.1, the graphdiff_dump helper's tree
  vit_mixup_frozen                  BUG mixup lambda drawn with numpy in the loop, read as a Python float by
                                        the captured step
  vit_stale_input                   BUG static_x = x instead of copy_, autocast, np.savez
  vit_autocast_cache                BUG one autocast region (cache on) around warm-up and capture, safetensors
  vit_lr_drop_captured              BUG a float lr dropped x0.1 at step 1005 after capture, warm-up dumped
  resnet_bn_resume_fp32_sgd_ok      ok  resume at 1200, SGD momentum, torch.save dict per step (BatchNorm
                                        buffers inside model/)
  resnet_bn_recipe_tf32_adam_ok     ok  the recipe from step 0, TF32, Adam, np.savez of the state_dict
                                        (buffers under params/)
  resnet_bn_resume_bf16_sgd_ok      ok  resume, pure bf16, SGD momentum, safetensors per kind
  resnet_bn_milestone_recapture_ok  ok  SGD lr x0.1 at 1205 (a float), graph captured again at the milestone,
                                        params-only ckpt_<k>.pt, warm-up dumped
  resnet_bn_momentum_recapture_ok   ok  BatchNorm momentum 0.1 -> 0.01 at 1205, graph captured again, .npy
                                        tree with buffers/
  resnet_bn_helper_autocast_ok      ok  resume, autocast, the graphdiff_dump helper's tree
  resnet_bn_momentum_after_capture  BUG bn.momentum = 0.01 set at 1205 after capture: only running stats
                                        depart
  resnet_bn_momentum_helper         BUG the same momentum bug dumped by the graphdiff_dump helper
  resnet_bn_milestone_captured      BUG SGD lr x0.1 at 1205 (a float) after capture, np.savez of the
                                        state_dict
  resnet_bn_grad_accumulation       BUG no zero_grad(set_to_none=True) before capture: the captured backward
                                        adds to the warm-up's grads
  resnet_bn_input_lag               BUG the batch copied after replay, safetensors
  resnet_bn_output_aliasing         BUG dumps written after the loop, grads and loss kept by reference (model
                                        cloned)
  resnet_bn_partial_batch           BUG an epoch's last batch of 6 at 1206 copied into static_x[:6]
  unet_gn_resume_fp32_ema_ok        ok  resume at 800, AdamW, EMA captured, torch.save dict with ema
  unet_gn_resume_bf16_ema_ok        ok  resume, pure bf16 model, fp32 EMA, np.savez (.float())
  unet_gn_autocast_ema_ok           ok  resume, autocast, ema.safetensors per step, warm-up dumped
  unet_gn_callables_ok              ok  make_graphed_callables on the UNet, optimizer and EMA eager, params-
                                        only ckpt with ema.* every 2 steps
  unet_gn_ema_switch_recapture_ok   ok  EMA decay 0.99 -> 0.999 at 806, graph captured again,
                                        model_<k>.safetensors with ema.*
  unet_gn_recipe_tf32_ok            ok  the recipe from step 0, TF32, .npy tree with ema/
  unet_gn_ema_decay_captured        BUG EMA decay switched 0.99 -> 0.999 at 806 after capture: only EMA
                                        weights depart
  unet_gn_python_timestep           BUG one diffusion timestep per batch from Python's random, baked at
                                        capture
  unet_gn_cpu_noise                 BUG noise drawn with numpy into a pinned buffer inside the captured step
  unet_gn_grad_accumulation         BUG no zero_grad(set_to_none=True) before capture, autocast, np.savez
  moe_recipe_top2_fp32_ok           ok  the recipe from step 0, top-2, Adam fused (capturable), torch.save
                                        dict
  moe_resume_top1_autocast_ok       ok  resume at 1000, top-1, autocast, np.savez
  moe_resume_top2_bf16_ok           ok  resume, top-2, pure bf16, safetensors per kind
  moe_aux_anneal_tensor_ok          ok  aux weight 0.01 -> 0.002 at 1005 held in a device tensor
  moe_callables_top2_ok             ok  make_graphed_callables on the model, optimizer eager, params-only
                                        ckpt_<k>.pt
  moe_uninit_combine                BUG the experts' combine buffer from torch.empty_like
  moe_aux_branch_captured           BUG aux loss only while step < 1005, a Python if decided at capture,
                                        np.savez, warm-up dumped
  moe_aux_weight_captured           BUG aux weight 0.01 -> 0.002 at 1005 as a Python float after capture
  moe_grad_accumulation             BUG no zero_grad(set_to_none=True) before capture, safetensors
  moe_stale_input                   BUG static_x = x, top-1, pure bf16, np.savez (.float())
  kv_decoder_fp32_ok                ok  greedy decoding, fp32, pos_<t>.pt
  kv_decoder_bf16_ok                ok  greedy decoding, pure bf16, gen_<t>.npz (.float())
  kv_decoder_autocast_ok            ok  greedy decoding, autocast, step_<t>/outputs.safetensors
  kv_decoder_tf32_ok                ok  greedy decoding, TF32, pos_<t>.pt
  kv_decoder_output_aliasing        BUG generated.append(static_logits, static_next): saved after the loop
  kv_decoder_stale_token            BUG static_tok = next_tok instead of copy_
  kv_decoder_captured_pos           BUG the decode position a Python int in the captured step
  kv_decoder_uninit_pad             BUG the padded logits buffer from torch.empty
  kv_decoder_cache_rebuilt          BUG two generations; kc = torch.zeros_like(kc) before the second
  tcn_resume_fp32_ok                ok  resume at 600, SGD momentum, torch.save dict per step
  tcn_resume_autocast_npz_ok        ok  resume, autocast, np.savez per step
  tcn_resume_bf16_st_ok             ok  resume, pure bf16, safetensors per kind
  tcn_dropout_ok                    ok  resume, dropout 0.1 (graph-safe RNG), torch.save dict
  tcn_recipe_tf32_adamw_ok          ok  the recipe from step 0, TF32, AdamW (capturable), np.savez
  tcn_clip_ok                       ok  resume, gradient clipping (max norm 1), safetensors per kind
  tcn_numpy_dropout                 BUG a dropout mask drawn with numpy into a pinned buffer inside the
                                        captured step
  tcn_stale_input                   BUG static_x = x instead of copy_, autocast, np.savez
  tcn_input_lag                     BUG the batch copied into the static input after the replay
  tcn_lr_drop_captured              BUG a float lr dropped x0.1 at step 605 after capture
  tcn_grad_accumulation             BUG no zero_grad(set_to_none=True) before capture, np.savez
  tcn_kept_by_reference             BUG dumps written after the loop, grads and loss kept by reference
  tcn_partial_batch                 BUG an epoch's last batch of 6 at 605 copied into static_x[:6]
  tab_resume_fp32_ok                ok  resume at 500, AdamW, BatchNorm1d, torch.save dict per step
  tab_resume_autocast_ok            ok  resume, autocast, safetensors per kind
  tab_dropout_npz_ok                ok  resume, dropout 0.1 (graph-safe RNG), np.savez
  tab_momentum_recapture_ok         ok  BatchNorm momentum 0.1 -> 0.01 at 505, graph captured again
  tab_warmup_dumped_ok              ok  resume, warm-up dumped, np.savez
  tab_numpy_dropout                 BUG a dropout mask drawn with numpy into a pinned buffer inside the
                                        captured step
  tab_numpy_dropout_warmup          BUG the same with the warm-up steps dumped, np.savez
  tab_stale_input                   BUG static inputs rebound instead of copied, torch.save dict
  tab_input_lag                     BUG the batch copied into the static inputs after the replay, np.savez
  tab_lr_drop_captured              BUG a float lr dropped x0.1 at step 505 after capture, safetensors
  tab_momentum_after_capture        BUG bn.momentum = 0.01 set at 505 after capture
  tab_grad_accumulation             BUG no zero_grad(set_to_none=True) before capture, autocast, safetensors
  tab_kept_by_reference             BUG dumps written after the loop, grads and loss kept by reference
  tab_partial_batch                 BUG an epoch's last batch of 6 at 505 copied into the static inputs[:6]
  vae_resume_fp32_ok                ok  resume at 400, Adam, eps from the default generator, torch.save dict
  vae_resume_autocast_ok            ok  resume, autocast, np.savez per step
  vae_resume_bf16_ok                ok  resume, pure bf16, safetensors per kind
  vae_beta_tensor_ok                ok  KL weight 1.0 -> 0.2 at 405 held in a device tensor
  vae_recipe_adamw_ok               ok  the recipe from step 0, AdamW (capturable), np.savez
  vae_warmup_dumped_ok              ok  resume, warm-up dumped, safetensors
  vae_numpy_eps                     BUG eps drawn with numpy into a pinned buffer inside the captured step
  vae_beta_captured                 BUG KL weight 1.0 -> 0.2 at 405 as a Python float after capture, np.savez
  vae_stale_input                   BUG static_x = x instead of copy_, pure bf16, safetensors
  vae_input_lag                     BUG the batch copied into the static input after the replay
  vae_grad_accumulation             BUG no zero_grad(set_to_none=True) before capture, np.savez
  vae_kept_by_reference             BUG dumps written after the loop, grads and loss kept by reference
  vae_partial_batch                 BUG an epoch's last batch of 6 at 405 copied into static_x[:6]
  clr_resume_fp32_ok                ok  resume at 300, AdamW, views' noise from the default generator
  clr_resume_autocast_ok            ok  resume, autocast, safetensors per kind
  clr_resume_bf16_ok                ok  resume, pure bf16, np.savez
  clr_tau_tensor_ok                 ok  temperature 0.3 -> 0.14 at 305 held in a device tensor
  clr_warmup_dumped_ok              ok  resume, warm-up dumped, np.savez
  clr_numpy_views                   BUG the views' noise drawn with numpy into a pinned buffer inside the
                                        captured step
  clr_tau_captured                  BUG temperature 0.3 -> 0.14 at 305 as a Python float after capture
  clr_stale_input                   BUG static_x = x instead of copy_, np.savez
  clr_input_lag                     BUG the batch copied into the static input after the replay, autocast
  clr_grad_accumulation             BUG no zero_grad(set_to_none=True) before capture
  clr_kept_by_reference             BUG dumps written after the loop, grads and loss kept by reference
  clr_partial_batch                 BUG an epoch's last batch of 6 at 305 copied into static_x[:6]
  gnn_resume_fp32_ok                ok  resume at 700, Adam, dense adjacency, torch.save dict per step
  gnn_resume_autocast_ok            ok  resume, autocast, np.savez per step
  gnn_resume_bf16_ok                ok  resume, pure bf16, safetensors per kind
  gnn_recipe_sgd_ok                 ok  the recipe from step 0, SGD momentum, np.savez
  gnn_warmup_dumped_ok              ok  resume, warm-up dumped, safetensors
  gnn_numpy_dropout                 BUG a dropout mask drawn with numpy into a pinned buffer inside the
                                        captured step, np.savez
  gnn_stale_input                   BUG static inputs rebound instead of copied, safetensors
  gnn_input_lag                     BUG the batch copied into the static inputs after the replay, autocast
  gnn_lr_drop_captured              BUG a float lr dropped x0.1 at step 705 after capture, np.savez
  gnn_grad_accumulation             BUG no zero_grad(set_to_none=True) before capture, safetensors
  gnn_kept_by_reference             BUG dumps written after the loop, grads and loss kept by reference
  gnn_partial_batch                 BUG an epoch's last batch of 6 at 705 copied into the static inputs[:6]
  gnn_every4_ok                     ok  resume, dumps every 4 steps, torch.save dict
  tab_every4_autocast_ok            ok  resume, autocast, dumps every 4 steps, safetensors
  gnn_every4_stale_input            BUG static inputs rebound instead of copied, dumps every 4 steps
  gnn_every4_input_lag              BUG the batch copied into the static inputs after the replay, every 4
  tab_every4_lr_drop_captured       BUG a float lr dropped x0.1 at step 509 after capture, every 4
  gnn_every4_grad_accumulation      BUG no zero_grad(set_to_none=True) before capture, every 4
  tcn_every4_kept_by_reference      BUG grads and loss kept by reference, every 4
  tab_every4_numpy_dropout          BUG a dropout mask drawn with numpy inside the captured step, every 4
  tab_every4_momentum_after_capture BUG bn.momentum = 0.01 set at 509 after capture, every 4
  tcn_every4_partial_batch          BUG an epoch's last batch of 6 at 609 copied into static_x[:6], every 4
  tcn_tutorial_ok                   ok  resume, SGD momentum, PyTorch's general-checkpoint recipe per step
  gnn_tutorial_ok                   ok  resume, Adam, the general-checkpoint recipe per step
  tcn_tutorial_stale_input          BUG static_x = x instead of copy_, the checkpoint recipe
  gnn_tutorial_input_lag            BUG the batch copied in after the replay, the checkpoint recipe
  tab_tutorial_lr_drop_captured     BUG a float lr dropped x0.1 at step 505 after capture, the recipe
  tcn_tutorial_grad_accumulation    BUG no zero_grad(set_to_none=True) before capture, the recipe
  tab_tutorial_momentum_after_capture BUG bn.momentum = 0.01 set at 505 after capture, the recipe
  gnn_tutorial_numpy_dropout        BUG a numpy dropout mask inside the captured step, the recipe
  tcn_tutorial_partial_batch        BUG an epoch's last batch of 6 at 605 into static_x[:6], the recipe
  tab_tutorial_kept_by_reference    BUG the loss and the optimizer's state kept by reference, the recipe
  infer_resnet_fp32_ok              ok  resnet_bn served in eval mode, logits and probabilities per batch
  infer_resnet_autocast_ok          ok  served under autocast, np.savez per batch
  infer_tab_bf16_ok                 ok  the tabular classifier in pure bf16, safetensors per batch
  infer_temp_tensor_ok              ok  temperature 1.0 -> 0.6 at batch 3 held in a device tensor
  infer_prior_inplace_ok            ok  a prior adjustment per class set at batch 3 with copy_
  infer_stale_input                 BUG static input rebound to each batch instead of copied
  infer_tab_input_lag               BUG the tabular batch copied into the static inputs after the replay
  infer_kept_by_reference           BUG each batch's static outputs kept by reference
  infer_partial_batch               BUG a last batch of 6 copied into the static input[:6], 8 rows written
  infer_temp_captured               BUG temperature 1.0 -> 0.6 at batch 3 as a Python float after capture
  infer_prior_rebound               BUG the prior adjustment rebound at batch 3 instead of copied
  infer_numpy_dropout               BUG Monte Carlo input dropout drawn with numpy inside the captured forward
  (served temperatures, added after captured_scalar read a temperature from served outputs:)
  infer_tab_temp_captured           BUG one logit (a sigmoid), temperature 1.0 -> 0.6 at batch 3, a Python float
  infer_resnet_bf16_temp_annealed   BUG pure bf16, the temperature annealed every batch from 2, a Python float
  infer_resnet_autocast_temp_captured BUG autocast, temperature 1.0 -> 0.6 at batch 4, a Python float
  infer_tab_temp_annealed_tensor_ok ok  one logit, the temperature annealed every batch in a device tensor
  infer_resnet_bf16_temp_tensor_ok  ok  pure bf16, temperature 1.0 -> 0.6 at batch 2 in a device tensor
  infer_tab_prior_rebound           BUG one logit, its prior adjustment rebound at batch 3 instead of copied
  (decoding dumped sparsely, in bf16, over two generations, added with them:)
  kv_decoder_every2_ok              ok  greedy decoding, every 2nd position dumped
  kv_decoder_gens2_ok               ok  two generations, the cache zeroed in place between them
  kv_decoder_every2_captured_pos    BUG the decode position a Python int, every 2nd position dumped
  kv_decoder_bf16_captured_pos      BUG the decode position a Python int, pure bf16
  kv_decoder_every2_stale_token     BUG static_tok = next_tok instead of copy_, every 2nd position dumped
  kv_decoder_gens2_stale_token      BUG static_tok = next_tok instead of copy_, two generations, autocast
  (gru, a GRU cell unrolled over 12 tokens, a family added with them:)
  gru_resume_fp32_ok                ok  resume at 500, Adam, torch.save dict
  gru_resume_bf16_ok                ok  pure bf16, safetensors per kind
  gru_resume_autocast_ok            ok  autocast, np.savez per step
  gru_tutorial_ok                   ok  the general-checkpoint recipe per step
  gru_every4_dropout_ok             ok  dropout 0.1 (graph-safe RNG), dumps every 4 steps
  gru_stale_input                   BUG static inputs rebound instead of copied
  gru_input_lag                     BUG the batch copied into the static inputs after the replay
  gru_grad_accumulation             BUG no zero_grad(set_to_none=True) before capture
  gru_lr_drop_captured              BUG a float lr dropped x0.1 at step 505 after capture, bf16
  gru_numpy_dropout                 BUG a numpy dropout mask inside the captured step
  gru_kept_by_reference             BUG grads and loss kept by reference
  gru_tutorial_stale_input          BUG static_x = x instead of copy_, the checkpoint recipe
  gru_tutorial_grad_accumulation    BUG no zero_grad(set_to_none=True) before capture, the checkpoint recipe
  (lstm, truncated backpropagation through time with the state in buffers, a family added after gru:)
  lstm_resume_fp32_ok               ok  resume at 400, AdamW, the state carried in place
  lstm_resume_bf16_ok               ok  pure bf16, safetensors per kind
  lstm_resume_autocast_ok           ok  autocast, np.savez per step
  lstm_tutorial_ok                  ok  the general-checkpoint recipe per step
  lstm_state_rebound                BUG self.h = h.detach() instead of copy_ in the captured forward
  lstm_tutorial_state_rebound       BUG the same, the checkpoint recipe
  lstm_stale_input                  BUG static tokens rebound instead of copied
  lstm_input_lag                    BUG the batch copied into the static tokens after the replay
  lstm_grad_accumulation            BUG no zero_grad(set_to_none=True) before capture
  lstm_lr_drop_captured             BUG a float lr dropped x0.1 at step 405 after capture
  lstm_kept_by_reference            BUG grads and loss kept by reference
  (learning rates dropped between sparse dumps, added after the update scale was looked for there:)
  gru_every4_lr_drop_captured       BUG a float lr dropped x0.1 at 509 after capture, every 4
  lstm_every4_lr_drop_captured      BUG a float lr dropped x0.1 at 409 after capture, every 4
  resnet_bn_every4_lr_drop_captured BUG SGD momentum, a float lr dropped x0.1 at 1209, every 4
  moe_every2_lr_drop_captured       BUG a float lr dropped x0.1 at 1006 after capture, every 2
  gru_every4_lr_tensor_drop_ok      ok  the lr dropped at 509 in a device tensor, every 4
  lstm_every4_grad_accumulation     BUG no zero_grad(set_to_none=True) before capture, every 4
  (optimizer steps across sparse dumps, added after captured_scalar was named from updates alone:)
  vit_every4_lr_drop_captured       BUG a float lr dropped x0.1 at 1009 after capture, every 4
  tcn_every4_lr_drop_captured       BUG SGD momentum, a float lr dropped x0.1 at 609, every 4
  vae_every2_lr_drop_captured       BUG a float lr dropped x0.1 at 406 after capture, every 2
  clr_every4_lr_drop_captured       BUG a float lr dropped x0.1 at 309 after capture, every 4
  unet_gn_every4_lr_drop_captured   BUG a float lr dropped x0.1 at 809 after capture, EMA, every 4
  clr_every4_ok                     ok  resume, AdamW, every 4
  vit_every4_stale_input            BUG static_x = x instead of copy_, every 4
  tcn_every4_grad_accumulation      BUG SGD momentum, no zero_grad(set_to_none=True) before capture, every 4
  vae_every2_input_lag              BUG the batch copied in after the replay, every 2
  unet_gn_every4_numpy_noise        BUG numpy noise inside the captured step, every 4
  (served in pure fp16, added after the sparse-dump rules:)
  infer_resnet_fp16_ok              ok  resnet_bn served in pure fp16
  infer_tab_fp16_ok                 ok  the tabular classifier served in pure fp16
  infer_resnet_fp16_temp_captured   BUG pure fp16, temperature 1.0 -> 0.6 at batch 3, a Python float
  infer_resnet_fp16_stale_input     BUG pure fp16, static input rebound to each batch instead of copied
  kv_decoder_fp16_ok                ok  greedy decoding in pure fp16
  kv_decoder_fp16_captured_pos      BUG the decode position a Python int, pure fp16
  kv_decoder_fp16_stale_token       BUG static_tok = next_tok instead of copy_, pure fp16
  (convnext, depthwise convolutions, layer scale and stochastic depth, a family added after them:)
  convnext_resume_fp32_ok           ok  resume at 600, AdamW, torch.save dict
  convnext_resume_bf16_ok           ok  pure bf16, safetensors per kind
  convnext_resume_autocast_ok       ok  autocast, np.savez per step
  convnext_droppath_every2_ok       ok  stochastic depth 0.1 (graph-safe RNG), the checkpoint recipe every 2
  convnext_hf_ok                    ok  checkpoint-<k>/ as Hugging Face's Trainer saves them
  convnext_stale_input              BUG static_x = x instead of copy_, safetensors
  convnext_input_lag                BUG the batch copied into the static input after the replay, np.savez
  convnext_grad_accumulation        BUG no zero_grad(set_to_none=True) before capture
  convnext_lr_drop_captured         BUG a float lr dropped x0.1 at step 605 after capture
  convnext_numpy_dropout            BUG a numpy dropout mask inside the captured step
  convnext_kept_by_reference        BUG grads and loss kept by reference
  convnext_partial_batch            BUG an epoch's last batch of 6 rows at step 605, np.savez
  convnext_hf_stale_input           BUG static_x = x instead of copy_, Hugging Face's layout
  convnext_tutorial_input_lag       BUG the batch copied in after the replay, the checkpoint recipe
  convnext_tutorial_grad_accumulation BUG no zero_grad(set_to_none=True) before capture, the checkpoint recipe
  (convnext again, added after it scored 15/15:)
  convnext_ema_every2_ok            ok  EMA captured, model_<k>.safetensors with ema.*, every 2
  convnext_ema_decay_captured       BUG EMA decay switched 0.99 -> 0.999 at 605 after capture
  convnext_ema_switch_recapture_ok  ok  EMA decay 0.99 -> 0.999 at 605, graph captured again, np.savez
  convnext_cosine_tensor_ok         ok  autocast, cosine lr in a device tensor, clipping, the helper's tree
  convnext_autocast_cache           BUG one autocast region (cache on) around warm-up and capture
  convnext_bf16_lr_drop_captured    BUG a float lr dropped x0.1 at 605 after capture, pure bf16
  convnext_every4_lr_drop_captured  BUG a float lr dropped x0.1 at 609 after capture, every 4
  convnext_every2_stale_input       BUG static_x = x instead of copy_, the checkpoint recipe every 2
  convnext_every4_input_lag         BUG the batch copied in after the replay, every 4
  convnext_ema_numpy_dropout        BUG a numpy dropout mask inside the captured step, EMA
  (other optimizers from step 0, added after convnext:)
  tab_recipe_rmsprop_ok             ok  RMSprop (capturable), the checkpoint recipe
  gru_recipe_nadam_ok               ok  NAdam (capturable), torch.save dict
  convnext_recipe_radam_ok          ok  RAdam (capturable), np.savez
  gnn_recipe_adamax_ok              ok  Adamax (capturable), the checkpoint recipe
  vit_recipe_nesterov_ok            ok  SGD with Nesterov momentum, safetensors
  tab_recipe_rmsprop_lr_drop_captured BUG RMSprop, a float lr dropped x0.1 at step 5 after capture
  gru_recipe_nadam_grad_accumulation BUG NAdam, no zero_grad(set_to_none=True) before capture
  convnext_recipe_radam_stale_input BUG RAdam, static_x = x instead of copy_
  gnn_recipe_adamax_input_lag       BUG Adamax, the batch copied in after the replay, the checkpoint recipe
  vit_recipe_nesterov_lr_drop_captured BUG SGD Nesterov, a float lr dropped x0.1 at step 5 after capture
  tab_recipe_rmsprop_tutorial_grad_accumulation BUG RMSprop, no zero_grad before capture, the checkpoint recipe
  convnext_recipe_nadam_tutorial_stale_input BUG NAdam, static_x = x instead of copy_, the checkpoint recipe
  (correct runs on PyTorch's default kernels and fused attention, added after them:)
  resnet_bn_nondet_ok               ok  cuDNN benchmark and nondeterministic kernels, SGD momentum
  unet_gn_nondet_ema_ok             ok  nondeterministic kernels, EMA, np.savez
  convnext_nondet_bf16_ok           ok  pure bf16, nondeterministic kernels, safetensors
  tcn_nondet_tutorial_ok            ok  nondeterministic kernels, the checkpoint recipe
  vit_sdpa_bf16_ok                  ok  pure bf16, fused attention (SDPA)
  vit_sdpa_autocast_dropout_ok      ok  autocast, fused attention with dropout 0.1, np.savez
  moe_sdpa_hf_ok                    ok  fused attention, Hugging Face's layout
  tab_nondet_ok                     ok  nondeterministic kernels (embedding backward), safetensors
  lstm_nondet_autocast_ok           ok  autocast, nondeterministic kernels, np.savez
  gnn_nondet_every2_ok              ok  nondeterministic kernels, every 2 steps
  vit_sdpa_recipe_ok                ok  the recipe from step 0, Adam, fused attention
  moe_sdpa_recipe_bf16_ok           ok  the recipe from step 0, pure bf16, fused attention, the checkpoint recipe
  (OneCycleLR's momentum cycled from Python after capture, added after them:)
  vit_onecycle_betas_captured       BUG AdamW's beta1 cycled 0.85 -> 0.95 from 1004, a float after capture
  gru_onecycle_betas_captured       BUG Adam's beta1 cycled from 504 after capture, np.savez
  resnet_bn_onecycle_momentum_captured BUG SGD's momentum cycled from 1204 after capture, safetensors
  convnext_onecycle_tutorial_betas_captured BUG AdamW's beta1 cycled from 604, the checkpoint recipe
  tab_onecycle_hf_betas_captured    BUG AdamW's beta1 cycled from 504, Hugging Face's layout
  moe_onecycle_every2_betas_captured BUG Adam's beta1 cycled from 1004, every 2
  vit_onecycle_recapture_ok         ok  beta1 cycled, the graph captured again when it changes
  gru_onecycle_recapture_ok         ok  beta1 cycled, the graph captured again, np.savez
  (the momentum rule fitted to saved moments, an lr tensor beside a saved optimizer, RAdam; added after them:)
  tcn_onecycle_tutorial_momentum_captured BUG SGD's momentum cycled from 604 after capture, the checkpoint recipe
  gru_onecycle_hf_betas_captured    BUG Adam's beta1 cycled from 504 after capture, Hugging Face's layout
  vae_onecycle_tutorial_betas_captured BUG Adam's beta1 cycled from 404 after capture, the checkpoint recipe
  lstm_onecycle_recapture_tutorial_ok ok beta1 cycled, the graph captured again, the checkpoint recipe
  vit_hf_cosine_tensor_ok           ok  a cosine lr in a device tensor, Hugging Face's layout
  moe_tutorial_cosine_tensor_ok     ok  a cosine lr in a device tensor, the checkpoint recipe
  gnn_recipe_radam_ok               ok  RAdam from step 0, np.savez
  tab_recipe_radam_lr_drop_captured BUG RAdam, a float lr dropped x0.1 at step 7 after capture
  vae_recipe_radam_tutorial_ok      ok  RAdam from step 0, the checkpoint recipe
  convnext_recipe_radam_every2_ok   ok  RAdam from step 0, safetensors every 2 steps
  (vit and convnext served, added after them:)
  infer_vit_fp32_ok                 ok  vit served in eval mode, torch.save per batch
  infer_convnext_bf16_ok            ok  convnext served in pure bf16, safetensors per batch
  infer_vit_autocast_sdpa_ok        ok  vit served under autocast, fused attention
  infer_convnext_temp_captured      BUG temperature 1.0 -> 0.6 at batch 3, a Python float after capture
  infer_vit_fp16_temp_captured      BUG pure fp16, the temperature frozen at capture
  infer_vit_stale_input             BUG static input rebound to each batch
  infer_convnext_input_lag          BUG the batch copied into the static input after the replay
  infer_convnext_kept_by_reference  BUG each batch's static outputs kept by reference
  infer_vit_partial_batch           BUG a last batch of 6 at batch 4 copied into the static input[:6]
  (an EMA decay warmed up from Python, added after them:)
  unet_gn_recipe_ema_warmup_captured BUG EMA decay (1 + k)/(10 + k), a Python float frozen at capture
  vit_recipe_ema_warmup_captured    BUG the same for vit's EMA, safetensors
  tab_recipe_ema_warmup_captured    BUG the same for the tabular model, torch.save dict
  unet_gn_recipe_ema_warmup_recapture_ok ok the EMA decay warmed up, the graph captured again
  (the momentum rule again, added after them:)
  gru_onecycle_recapture_hf_ok      ok  beta1 cycled, captured again, Hugging Face's layout
  resnet_bn_onecycle_recapture_tutorial_ok ok SGD's momentum cycled, captured again, the checkpoint recipe
  vit_recipe_nesterov_onecycle_tutorial_captured BUG SGD Nesterov momentum cycled after capture, the checkpoint recipe
  convnext_recipe_nadam_onecycle_hf_captured BUG NAdam's beta1 cycled after capture, Hugging Face's layout
  moe_onecycle_tutorial_every2_betas_captured BUG beta1 cycled after capture, the checkpoint recipe every 2
  tab_recipe_radam_hf_ok            ok  RAdam from step 0, Hugging Face's layout

How labels are observed (not assumed)
- Every run is deterministic: fixed seeds, torch.use_deterministic_algorithms
  (True), CUBLAS_WORKSPACE_CONFIG=:4096:8, cudnn deterministic, TF32 as the
  scenario says; torch.empty is left uninitialized (fill_uninitialized_memory
  off) so that the uninitialized-memory bugs stay what they are.
- A correct scenario is the same program graphed; verdict pass. Its eager vs
  graph numbers are measured and written; a large loss difference at the
  first dumped step is printed as a WARNING (not expected).
- A buggy scenario is also run as its twin: the same graphed run with the bug
  fixed (for captured Python values: the graph captured again whenever the
  value changes, so the twin runs the same kernels). The twin runs twice and
  must repeat itself bit for bit, else the scenario is reported and skipped.
  first_divergent_step is the first dumped step (its global step, as the file
  or directory name says) at which any dumped tensor of the buggy graphed run
  differs bit for bit from the twin's. A bug that never shows in the dumps is
  reported and skipped. measured.json holds the numbers (eager vs graph per
  step; graph vs twin per step; the tensors that differ first and by how
  much); label.json's note says how the scenario was made and what showed.
- A bug whose run moves no farther from eager at its first divergent step
  than rounding does is labelled hard (shown, not scored): the eager run is
  made again from weights one unit in the last place apart (the baseline's
  nudge, build()), and when no tensor at that step differs from eager by
  more than NOISE_FACTOR (3) times the nudged run's difference, no rule read
  from those dumps can tell the bug from rounding (measured.json's
  "observable" holds the tensor nearest to standing out and its ratio).
  Curve pairs: curve_hard().

--cpu checks the logic without CUDA (e.g. Debian's torch 1.13): the device is
the CPU, a "graph" is simulated (capture records the step function with its
static arguments and the Python values it reads, then undoes what the
recording run changed; each replay runs it eagerly with those values and
copies its results into the static outputs and gradients), capturable
optimizers and tensor learning rates fall back, make_graphed_callables runs
the module eagerly, safetensors files are written by the graphdiff_dump
helper's own writer when the package is missing. Bugs that need a real graph
(REAL_GRAPH_ONLY: host work inside the captured step, torch.empty read from
the graph's pool) are reported and skipped; unet_gn's bf16 and autocast
scenarios run in fp32 (torch 1.13's CPU kernels fail there). --cpu output is
not a fixture.
"""

from __future__ import annotations

import os

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before CUDA starts

import argparse
import contextlib
import copy
import csv
import json
import math
import platform
import random
import shutil
import sys
import tempfile
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
GENERATOR = "testdata/gen/userloops.py"

try:
    import safetensors.torch as st_torch
except ImportError:  # --cpu here
    st_torch = None
sys.path.insert(0, str(REPO / "python"))
try:
    import graphdiff_dump
except ImportError:
    graphdiff_dump = None

SEED_INIT, SEED_RUN, SEED_HOST = 0, 1, 2
BATCH = 8
WARMUP = 3  # the recipe's warm-up iterations
T_DIFF = 100  # diffusion timesteps
BUDGET_S = 450  # no new scenario is started after this many seconds (GPU)


# --------------------------------------------------------------------------
# model families


class SelfAttention(nn.Module):
    def __init__(self, d, heads, drop=0.0, causal=False):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.heads, self.drop, self.causal = heads, drop, causal

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv(x).view(b, t, 3, h, d // h).permute(2, 0, 3, 1, 4)
        if getattr(self, "sdpa", False):  # the fused kernels, as most attention code calls them now
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.drop if self.training else 0.0,
                                               is_causal=self.causal)
            return F.dropout(self.proj(y.transpose(1, 2).reshape(b, t, d)), self.drop, self.training)
        att = (q @ k.transpose(-2, -1)) * (d // h) ** -0.5
        if self.causal:
            keep = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
            att = att.masked_fill(~keep, torch.finfo(att.dtype).min)
        att = F.dropout(att.softmax(-1), self.drop, self.training)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        return F.dropout(self.proj(y), self.drop, self.training)


class EncoderBlock(nn.Module):
    def __init__(self, d, heads, drop):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = SelfAttention(d, heads, drop)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)
        self.drop = drop

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + F.dropout(self.fc2(F.gelu(self.fc1(self.ln2(x)))), self.drop, self.training)


class ViT(nn.Module):
    """Patch embedding (4x4 patches of an 8x8 RGB image), class token,
    learned positions, a pre-LN encoder block, classification head."""

    def __init__(self, d=16, depth=1, heads=2, drop=0.0):
        super().__init__()
        self.patch = nn.Conv2d(3, d, 4, stride=4)
        self.cls = nn.Parameter(torch.zeros(1, 1, d))
        self.pos = nn.Parameter(0.02 * torch.randn(1, 5, d))
        self.blocks = nn.ModuleList([EncoderBlock(d, heads, drop) for _ in range(depth)])
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, 4)

    def forward(self, x):
        t = self.patch(x).flatten(2).transpose(1, 2)
        t = torch.cat([self.cls.expand(t.shape[0], -1, -1), t], 1) + self.pos
        for b in self.blocks:
            t = b(t)
        return self.head(self.norm(t[:, 0]))


class ResBlock(nn.Module):
    def __init__(self, c, bias=False):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=bias)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=bias)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        return F.relu(x + self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x))))))


class ResNetBN(nn.Module):
    """A stem and two basic residual blocks with BatchNorm, mean pooling;
    with conv_bias the convolutions ahead of each BatchNorm have a bias
    (which BatchNorm cancels: its gradient is rounding, its drift shifts
    the running means)."""

    def __init__(self, c=6, conv_bias=False):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1, bias=conv_bias)
        self.bn = nn.BatchNorm2d(c)
        self.layer1 = ResBlock(c, conv_bias)
        self.layer2 = ResBlock(c, conv_bias)
        self.fc = nn.Linear(c, 4)

    def forward(self, x):
        h = F.relu(self.bn(self.stem(x)))
        h = self.layer2(self.layer1(h))
        return self.fc(h.mean((2, 3)))


class UNetGN(nn.Module):
    """A two-level conv UNet with GroupNorm and a sinusoidal time embedding,
    predicting the noise of a 1x8x8 image."""

    def __init__(self, c=6, tdim=8):
        super().__init__()
        self.tdim = tdim
        self.temb = nn.Linear(tdim, c)
        self.inc = nn.Conv2d(1, c, 3, padding=1)
        self.gn1 = nn.GroupNorm(2, c)
        self.down = nn.Conv2d(c, c, 3, stride=2, padding=1)
        self.gn2 = nn.GroupNorm(2, c)
        self.mid = nn.Conv2d(c, c, 3, padding=1)
        self.gn3 = nn.GroupNorm(2, c)
        self.up = nn.ConvTranspose2d(c, c, 2, stride=2)
        self.dec = nn.Conv2d(2 * c, c, 3, padding=1)
        self.gn4 = nn.GroupNorm(2, c)
        self.out = nn.Conv2d(c, 1, 3, padding=1)

    def forward(self, x, t):
        half = self.tdim // 2
        freqs = torch.exp(-math.log(100.0) * torch.arange(half, device=x.device, dtype=torch.float32) / half)
        ang = t.float()[:, None] * 100.0 * freqs[None]
        e = F.silu(self.temb(torch.cat([ang.sin(), ang.cos()], 1).to(x.dtype)))[:, :, None, None]
        h1 = F.silu(self.gn1(self.inc(x))) + e
        h2 = F.silu(self.gn2(self.down(h1)))
        h2 = F.silu(self.gn3(self.mid(h2))) + h2
        h = F.silu(self.gn4(self.dec(torch.cat([self.up(h2), h1], 1))))
        return self.out(h)


class Expert(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class MoELM(nn.Module):
    """Token + position embeddings, one causal attention layer, a mixture of
    four experts routed top-k (computed densely, gates zero outside the top
    k), a load-balancing auxiliary loss, an LM head. uninit: the combine
    buffer starts as torch.empty_like instead of zeros_like."""

    V, T = 24, 8

    def __init__(self, d=16, experts=4, hidden=8, k=2):
        super().__init__()
        self.tok = nn.Embedding(self.V, d)
        self.pos = nn.Parameter(0.02 * torch.randn(self.T, d))
        self.ln1 = nn.LayerNorm(d)
        self.attn = SelfAttention(d, 2, causal=True)
        self.ln2 = nn.LayerNorm(d)
        self.router = nn.Linear(d, experts, bias=False)
        self.experts = nn.ModuleList([Expert(d, hidden) for _ in range(experts)])
        self.lnf = nn.LayerNorm(d)
        self.head = nn.Linear(d, self.V)
        self.k = k
        self.uninit = False

    def moe(self, h):
        b, t, d = h.shape
        x = h.reshape(b * t, d)
        n_exp = len(self.experts)
        probs = self.router(x).float().softmax(-1)
        _, top = probs.topk(self.k, -1)
        chosen = (top.unsqueeze(-1) == torch.arange(n_exp, device=x.device)).any(1)
        gates = probs * chosen
        gates = gates / gates.sum(-1, keepdim=True)
        out = torch.empty_like(x) if self.uninit else torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            out = out + gates[:, e:e + 1].to(x.dtype) * expert(x)
        aux = n_exp * (chosen.float().mean(0) / self.k * probs.mean(0)).sum()
        return out.view(b, t, d), aux

    def forward(self, x):
        h = self.tok(x) + self.pos[: x.shape[1]]
        h = h + self.attn(self.ln1(h))
        m, aux = self.moe(self.ln2(h))
        h = h + m
        return self.head(self.lnf(h)), aux


class TCNBlock(nn.Module):
    """A dilated causal-free Conv1d residual block: LayerNorm over channels,
    GELU, the convolution, dropout."""

    def __init__(self, c, dilation, drop):
        super().__init__()
        self.norm = nn.LayerNorm(c)
        self.conv = nn.Conv1d(c, c, 3, padding=dilation, dilation=dilation)
        self.drop = nn.Dropout(drop)

    def forward(self, h):
        a = F.gelu(self.norm(h.transpose(1, 2)).transpose(1, 2))
        return h + self.drop(self.conv(a))


class TCN(nn.Module):
    """A temporal convolutional classifier of 2-channel signals of 32 steps
    into 5 classes: a stem convolution, two dilated residual blocks, mean
    pooling over time, a linear head. mask, when given, multiplies the
    first block's output (a dropout mask the user draws)."""

    C, T, K = 16, 32, 5

    def __init__(self, drop=0.0):
        super().__init__()
        self.stem = nn.Conv1d(2, self.C, 3, padding=1)
        self.block1 = TCNBlock(self.C, 2, drop)
        self.block2 = TCNBlock(self.C, 4, drop)
        self.head = nn.Linear(self.C, self.K)

    def forward(self, x, mask=None):
        h = self.block1(self.stem(x))
        if mask is not None:
            h = h * mask
        return self.head(self.block2(h).mean(-1))


class Tabular(nn.Module):
    """A tabular classifier: 3 categorical columns through embeddings (6
    each) beside 8 numeric ones, BatchNorm1d, two SiLU layers with dropout,
    one logit (binary). mask, when given, multiplies the first hidden
    layer (a dropout mask the user draws)."""

    CATS, NUM, H = (7, 11, 5), 8, 32

    def __init__(self, drop=0.0):
        super().__init__()
        self.emb = nn.ModuleList([nn.Embedding(n, 6) for n in self.CATS])
        self.bn = nn.BatchNorm1d(6 * len(self.CATS) + self.NUM)
        self.fc1 = nn.Linear(6 * len(self.CATS) + self.NUM, self.H)
        self.fc2 = nn.Linear(self.H, self.H)
        self.out = nn.Linear(self.H, 1)
        self.drop = nn.Dropout(drop)

    def forward(self, cat, num, mask=None):
        e = torch.cat([m(cat[:, i]) for i, m in enumerate(self.emb)] + [num], 1)
        h = F.silu(self.fc1(self.bn(e)))
        if mask is not None:
            h = h * mask
        h = self.drop(F.silu(self.fc2(self.drop(h))))
        return self.out(h).squeeze(-1)


class GRUSeq(nn.Module):
    """A sequence classifier: tokens (vocabulary 24) through an embedding
    (12), a GRU cell unrolled over the 12 positions (hidden 32), LayerNorm
    on the last hidden state, 4 classes. mask, when given, multiplies the
    normalized state (a dropout mask the user draws)."""

    V, E, H, T, K = 24, 12, 32, 12, 4

    def __init__(self, drop=0.0):
        super().__init__()
        self.emb = nn.Embedding(self.V, self.E)
        self.cell = nn.GRUCell(self.E, self.H)
        self.norm = nn.LayerNorm(self.H)
        self.head = nn.Linear(self.H, self.K)
        self.drop = nn.Dropout(drop)

    def forward(self, tok, mask=None):
        e = self.emb(tok)
        h = torch.zeros(tok.shape[0], self.H, device=tok.device, dtype=e.dtype)
        for t in range(tok.shape[1]):
            h = self.cell(e[:, t], h)
        h = self.norm(h)
        if mask is not None:
            h = h * mask
        return self.head(self.drop(h))


class ConvNeXtBlock(nn.Module):
    """A ConvNeXt block: a depthwise 3×3 convolution, LayerNorm over the
    channels (channels last), a pointwise MLP (×4, GELU), a layer scale γ
    started at 1e-6 (as ConvNeXt's), stochastic depth (the residual branch
    dropped per sample with probability drop, drawn with torch's generator
    inside the step)."""

    def __init__(self, c, drop):
        super().__init__()
        self.dw = nn.Conv2d(c, c, 3, padding=1, groups=c)
        self.norm = nn.LayerNorm(c)
        self.up = nn.Linear(c, 4 * c)
        self.down = nn.Linear(4 * c, c)
        self.gamma = nn.Parameter(1e-6 * torch.ones(c))
        self.drop = drop

    def forward(self, h):
        a = self.dw(h).permute(0, 2, 3, 1)
        a = self.gamma * self.down(F.gelu(self.up(self.norm(a))))
        a = a.permute(0, 3, 1, 2)
        if self.training and self.drop > 0:
            keep = (torch.rand(h.shape[0], 1, 1, 1, device=h.device) >= self.drop).to(a.dtype)
            a = a * keep / (1 - self.drop)
        return h + a


class ConvNeXt(nn.Module):
    """A small ConvNeXt classifying 3×8×8 images into 4 classes: a 2×2
    patchify stem (16 channels), two ConvNeXt blocks, global average
    pooling, LayerNorm, a linear head. mask, when given, multiplies the
    pooled features (a dropout mask the user draws)."""

    C, K = 16, 4

    def __init__(self, drop=0.0):
        super().__init__()
        self.stem = nn.Conv2d(3, self.C, 2, stride=2)
        self.block1 = ConvNeXtBlock(self.C, drop)
        self.block2 = ConvNeXtBlock(self.C, drop)
        self.norm = nn.LayerNorm(self.C)
        self.head = nn.Linear(self.C, self.K)

    def forward(self, x, mask=None):
        h = self.block2(self.block1(self.stem(x))).mean((2, 3))
        h = self.norm(h)
        if mask is not None:
            h = h * mask
        return self.head(h)


class LSTMLM(nn.Module):
    """A token language model trained with truncated backpropagation
    through time: embeddings (vocabulary 16, 16), an LSTM cell unrolled
    over the 8 positions of a batch (hidden 32), a linear head over the
    vocabulary at every position. The sequences run on from one batch to
    the next, and the cell's state after a batch is kept in buffers (not
    saved with the model) that the next batch starts from: written in
    place, or, with rebind (the bug), rebound to the new state, which a
    captured step never reads again."""

    V, E, H, T = 16, 16, 32, 8

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(self.V, self.E)
        self.cell = nn.LSTMCell(self.E, self.H)
        self.head = nn.Linear(self.H, self.V)
        self.register_buffer("h", torch.zeros(BATCH, self.H), persistent=False)
        self.register_buffer("c", torch.zeros(BATCH, self.H), persistent=False)
        self.rebind = False

    def forward(self, tok):
        e = self.emb(tok)
        h, c = self.h.to(e.dtype, copy=True), self.c.to(e.dtype, copy=True)  # the buffers are written below
        outs = []
        for t in range(tok.shape[1]):
            h, c = self.cell(e[:, t], (h, c))
            outs.append(h)
        if self.rebind:
            self.h, self.c = h.detach(), c.detach()  # BUG: the graph keeps reading the old buffers
        else:
            self.h.copy_(h.detach())
            self.c.copy_(c.detach())
        return self.head(torch.stack(outs, 1))


class VAE(nn.Module):
    """A variational autoencoder of 16-dimensional vectors: an MLP encoder
    to the mean and log-variance of a 4-dimensional latent, the
    reparameterised sample mu + eps·exp(logvar / 2), an MLP decoder."""

    X, Z, H = 16, 4, 32

    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(self.X, self.H), nn.Tanh())
        self.mu = nn.Linear(self.H, self.Z)
        self.logvar = nn.Linear(self.H, self.Z)
        self.dec = nn.Sequential(nn.Linear(self.Z, self.H), nn.Tanh(), nn.Linear(self.H, self.X))

    def forward(self, x, eps):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)
        return self.dec(mu + eps * torch.exp(0.5 * logvar)), mu, logvar


class CLR(nn.Module):
    """A contrastive encoder of 12-dimensional vectors: an MLP with
    LayerNorm to a 16-dimensional representation, a projection head to 8,
    L2-normalised."""

    X, H, P = 12, 32, 8

    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(self.X, self.H), nn.LayerNorm(self.H), nn.ReLU(), nn.Linear(self.H, 16))
        self.proj = nn.Sequential(nn.ReLU(), nn.Linear(16, self.P))

    def forward(self, x):
        return F.normalize(self.proj(self.enc(x)).float(), dim=-1)


class GCN(nn.Module):
    """A graph classifier over batches of small graphs of V nodes given as a
    dense normalised adjacency (D^-1/2 (A + I) D^-1/2): two graph
    convolutions (aggregate the neighbours' linear maps, ReLU) with a
    residual, LayerNorm, mean over the nodes, a linear head over K graph
    kinds. mask, when given, multiplies the first convolution's output (a
    dropout mask the user draws)."""

    V, F, H, K = 10, 6, 24, 3

    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(self.F, self.H)
        self.l2 = nn.Linear(self.H, self.H)
        self.norm = nn.LayerNorm(self.H)
        self.head = nn.Linear(self.H, self.K)

    def forward(self, x, adj, mask=None):
        h = F.relu(adj @ self.l1(x))
        if mask is not None:
            h = h * mask
        h = self.norm(F.relu(adj @ self.l2(h)) + h)
        return self.head(h.mean(1))


class KVDecoder(nn.Module):
    """A one-layer causal transformer (single head) with a static KV cache.
    The vocabulary has 60 tokens; the embedding table and the logits buffer
    are padded to 64 (padded logits set to the dtype's lowest value)."""

    V, VPAD, D, TMAX = 60, 64, 32, 24

    def __init__(self):
        super().__init__()
        d = self.D
        self.tok = nn.Embedding(self.VPAD, d)
        self.pos = nn.Embedding(self.TMAX, d)
        self.ln1 = nn.LayerNorm(d)
        self.wq = nn.Linear(d, d)
        self.wk = nn.Linear(d, d)
        self.wv = nn.Linear(d, d)
        self.wo = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)
        self.lnf = nn.LayerNorm(d)
        self.head = nn.Linear(d, self.V)
        self.register_buffer("ar", torch.arange(self.TMAX), persistent=False)

    def forward(self, x):  # teacher forcing, for training
        b, t = x.shape
        h = self.tok(x) + self.pos(self.ar[:t])
        a = self.ln1(h)
        q, k, v = self.wq(a), self.wk(a), self.wv(a)
        att = (q @ k.transpose(1, 2)) * self.D ** -0.5
        keep = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~keep, torch.finfo(att.dtype).min).softmax(-1)
        h = h + self.wo(att @ v)
        h = h + self.fc2(F.gelu(self.fc1(self.ln2(h))))
        return self.head(self.lnf(h))

    def step(self, tok, pos, kc, vc, uninit=False):
        """One decode step at position pos (a 0-d device tensor, or a Python
        int): writes k, v into the cache, returns the padded logits and the
        greedy next token."""
        if torch.is_tensor(pos):
            h = self.tok(tok) + self.pos(pos)
        else:
            h = self.tok(tok) + self.pos.weight[pos]
        a = self.ln1(h)
        q, k, v = self.wq(a), self.wk(a), self.wv(a)
        if torch.is_tensor(pos):
            at = (self.ar == pos).view(1, -1, 1)
            kc.copy_(torch.where(at, k.unsqueeze(1), kc))
            vc.copy_(torch.where(at, v.unsqueeze(1), vc))
        else:
            kc[:, pos] = k
            vc[:, pos] = v
        valid = self.ar <= pos
        att = (kc @ q.unsqueeze(-1)).squeeze(-1) * self.D ** -0.5
        att = att.masked_fill(~valid, torch.finfo(att.dtype).min).softmax(-1)
        h = h + self.wo((att.unsqueeze(1) @ vc).squeeze(1))
        h = h + self.fc2(F.gelu(self.fc1(self.ln2(h))))
        lg = self.head(self.lnf(h))
        dt = self.head.weight.dtype
        if uninit:
            logits = torch.empty(tok.shape[0], self.VPAD, dtype=dt, device=tok.device)
        else:
            logits = torch.full((tok.shape[0], self.VPAD), torch.finfo(dt).min, dtype=dt, device=tok.device)
        logits[:, : self.V] = lg
        return logits, logits.argmax(-1)


# --------------------------------------------------------------------------
# data: batch k of a family is a function of k alone (any run can draw it)


def _gen(step, salt):
    return torch.Generator().manual_seed(1_000_003 * salt + step)


def _patterns(salt, kind):
    g = torch.Generator().manual_seed(777 + salt)
    p = torch.zeros(4, 3, 8, 8)
    yy, xx = torch.meshgrid(torch.arange(8.0), torch.arange(8.0), indexing="ij")
    for c in range(4):
        if kind == "quadrant":
            p[c, c % 3, (c // 2) * 4:(c // 2) * 4 + 4, (c % 2) * 4:(c % 2) * 4 + 4] = 1.0
        else:
            p[c, (c + 1) % 3] = torch.sin((c + 1) * 0.7 * (xx if c % 2 else yy))
    return p + 0.05 * torch.randn(4, 3, 8, 8, generator=g)


_PAT = {}


def batch_vit(k, n=BATCH):
    g = _gen(k, 1)
    pat = _PAT.setdefault("vit", _patterns(1, "quadrant"))
    y = torch.randint(0, 4, (n,), generator=g)
    return 0.5 * torch.randn(n, 3, 8, 8, generator=g) + pat[y], y


def batch_resnet(k, n=BATCH):
    g = _gen(k, 2)
    pat = _PAT.setdefault("resnet", _patterns(2, "stripes"))
    y = torch.randint(0, 4, (n,), generator=g)
    return 0.6 * torch.randn(n, 3, 8, 8, generator=g) + pat[y], y


def batch_unet(k, n=BATCH):
    g = _gen(k, 3)
    low = torch.randn(n, 1, 2, 2, generator=g)
    return (F.interpolate(low, size=(8, 8), mode="bilinear", align_corners=False),)


def _progressions(g, n, length, vocab, strides):
    s = torch.randint(0, vocab, (n, 1), generator=g)
    d = torch.tensor(strides)[torch.randint(0, len(strides), (n, 1), generator=g)]
    return (s + d * torch.arange(length)) % vocab


def batch_moe(k, n=BATCH):
    seq = _progressions(_gen(k, 4), n, MoELM.T + 1, MoELM.V, (1, 2, 3, 5))
    return seq[:, :-1].contiguous(), seq[:, 1:].contiguous()


def batch_decoder(k, n=BATCH):
    seq = _progressions(_gen(k, 5), n, 18, KVDecoder.V, (1, 2, 3, 4, 7))
    return seq[:, :-1].contiguous(), seq[:, 1:].contiguous()


def batch_tcn(k, n=BATCH):
    """Class c is a sine of frequency c + 1 with a random phase (channel 0)
    and its cosine (channel 1), in noise."""
    g = _gen(k, 7)
    y = torch.randint(0, TCN.K, (n,), generator=g)
    phase = 2 * math.pi * torch.rand(n, 1, generator=g)
    t = torch.arange(TCN.T) / TCN.T
    w = 2 * math.pi * (y.float().view(n, 1) + 1) * t + phase
    x = torch.stack([torch.sin(w), torch.cos(w)], 1)
    return x + 0.3 * torch.randn(n, 2, TCN.T, generator=g), y


def batch_tab(k, n=BATCH):
    """The label is 1 where a fixed linear score of the numeric columns plus
    a per-category offset is positive (5% of labels flipped)."""
    g = _gen(k, 8)
    w = torch.linspace(-1, 1, Tabular.NUM)
    cat = torch.stack([torch.randint(0, c, (n,), generator=g) for c in Tabular.CATS], 1)
    num = torch.randn(n, Tabular.NUM, generator=g)
    score = num @ w + 0.3 * (cat[:, 0] % 3 - 1).float() - 0.2 * (cat[:, 1] % 2).float()
    y = (score > 0).float()
    flip = torch.rand(n, generator=g) < 0.05
    return cat, num, torch.where(flip, 1 - y, y)


def batch_convnext(k, n=BATCH):
    """Two pattern sets mixed: the class is the quadrant pattern's, the
    stripes at a random strength are clutter."""
    g = _gen(k, 13)
    quad = _PAT.setdefault("convnext_q", _patterns(13, "quadrant"))
    stripes = _PAT.setdefault("convnext_s", _patterns(14, "stripes"))
    y = torch.randint(0, 4, (n,), generator=g)
    clutter = torch.rand(n, 1, 1, 1, generator=g) * stripes[torch.randint(0, 4, (n,), generator=g)]
    return 0.5 * torch.randn(n, 3, 8, 8, generator=g) + quad[y] + clutter, y


def batch_gru(k, n=BATCH):
    """The class is two bits: whether the last token is in the vocabulary's
    upper half, and whether the one three before it is: the cell must
    carry a token over two steps."""
    g = _gen(k, 12)
    tok = torch.randint(0, GRUSeq.V, (n, GRUSeq.T), generator=g)
    half = GRUSeq.V // 2
    return tok, (tok[:, -1] >= half).long() + 2 * (tok[:, -4] >= half).long()


def lstm_tokens(k, n):
    """Positions [k·T, (k+1)·T) of n token streams: row r repeats the
    period (r, r+3, r+6, r+9, r+12) mod 16, 10% of tokens drawn at random."""
    T, V = LSTMLM.T, LSTMLM.V
    g = _gen(k, 13)
    pos = torch.arange(k * T, (k + 1) * T)
    row = torch.arange(n)[:, None]
    tok = (row + 3 * (pos[None, :] % 5)) % V
    noise = torch.randint(0, V, (n, T), generator=g)
    return torch.where(torch.rand(n, T, generator=g) < 0.1, noise, tok)


def batch_lstm(k, n=BATCH):
    """Batch k of the streams and its targets, each position's next token
    (the last one's is the first of batch k+1)."""
    tok = lstm_tokens(k, n)
    return tok, torch.cat([tok[:, 1:], lstm_tokens(k + 1, n)[:, :1]], 1)


def batch_vae(k, n=BATCH):
    """Points near a 2-dimensional curved manifold in 16 dimensions."""
    g = _gen(k, 9)
    u = torch.rand(n, 2, generator=g) * 2 - 1
    basis = torch.Generator().manual_seed(909)
    w1, w2 = torch.randn(2, VAE.X, generator=basis), torch.randn(2, VAE.X, generator=basis)
    return (torch.tanh(u @ w1) + 0.5 * torch.sin(2 * u @ w2) + 0.05 * torch.randn(n, VAE.X, generator=g),)


def batch_clr(k, n=BATCH):
    """Points of 4 clusters in 12 dimensions."""
    g = _gen(k, 10)
    centres = torch.randn(4, CLR.X, generator=torch.Generator().manual_seed(1010))
    c = torch.randint(0, 4, (n,), generator=g)
    return (centres[c] + 0.3 * torch.randn(n, CLR.X, generator=g),)


def batch_gnn(k, n=BATCH):
    """Graphs of three kinds, the label: a ring, a star with a ring around
    its hub, or random edges (each pair with chance 0.3); node numbers
    permuted, features noise beside a constant column."""
    g = _gen(k, 11)
    V = GCN.V
    y = torch.randint(0, GCN.K, (n,), generator=g)
    adj = torch.zeros(n, V, V)
    ring = torch.arange(V), (torch.arange(V) + 1) % V
    for i in range(n):
        a = torch.zeros(V, V)
        if y[i] == 0:
            a[ring] = 1
        elif y[i] == 1:
            a[0, 1:] = 1
            a[ring[0][1:-1], ring[0][2:]] = 1
        else:
            a = (torch.rand(V, V, generator=g) < 0.3).float().triu(1)
        a = ((a + a.t()) > 0).float() + torch.eye(V)
        perm = torch.randperm(V, generator=g)
        a = a[perm][:, perm]
        d = a.sum(1).rsqrt()
        adj[i] = d[:, None] * a * d[None, :]
    x = 0.5 * torch.randn(n, V, GCN.F, generator=g)
    x[..., 0] = 1.0
    return x, adj, y


def decode_prompts(gen=0):
    """Generation gen's prompts: 4 progressions of 6 tokens."""
    return _progressions(_gen(gen, 6), 4, 6, KVDecoder.V, (1, 2, 3, 4, 7))


# --------------------------------------------------------------------------
# losses (the user's step code)


def loss_vit(sc, net, inp, hp, aux):
    x, y = inp
    if sc.mixup:  # timm-style mixup with the batch flipped; lambda a Python float
        lam = hp.lam
        logits = net(x * lam + x.flip(0) * (1.0 - lam)).float()
        return lam * F.cross_entropy(logits, y) + (1.0 - lam) * F.cross_entropy(logits, y.flip(0))
    return F.cross_entropy(net(x).float(), y)


def loss_resnet(sc, net, inp, hp, aux):
    x, y = inp
    return F.cross_entropy(net(x).float(), y)


def loss_unet(sc, net, inp, hp, aux):
    (x0,) = inp
    b = x0.shape[0]
    if sc.noise == "cpu":  # numpy noise through a pinned staging buffer
        noise = aux.host_values(x0.device).to(x0.dtype)
    else:
        noise = torch.randn_like(x0)  # the default generator: graph-safe
    if sc.timestep == "python":  # one timestep per batch, drawn in Python
        a = aux.acp[hp.t]
        tf = torch.full((b,), hp.t / T_DIFF, device=x0.device)
    else:
        ti = torch.randint(0, T_DIFF, (b,), device=x0.device)
        a = aux.acp.index_select(0, ti).view(b, 1, 1, 1)
        tf = ti.float() / T_DIFF
    a = a.to(x0.dtype)
    pred = net(a.sqrt() * x0 + (1 - a).sqrt() * noise, tf)
    return F.mse_loss(pred.float(), noise.float())


def loss_moe(sc, net, inp, hp, aux):
    x, y = inp
    logits, balance = net(x)
    loss = F.cross_entropy(logits.float().reshape(-1, MoELM.V), y.reshape(-1))
    if sc.aux == "tensor":
        return loss + aux.aux_w * balance
    if sc.aux_until is not None:
        if hp.step < hp.aux_until:  # a Python branch: the capture decides it once
            loss = loss + hp.aux_w * balance
        return loss
    return loss + hp.aux_w * balance


def loss_decoder(sc, net, inp, hp, aux):
    x, y = inp
    return F.cross_entropy(net(x).float().reshape(-1, KVDecoder.V), y.reshape(-1))


def host_dropout(sc, aux, device, dtype):
    """The user's dropout 0.1 mask drawn with numpy into a pinned buffer
    (sc.noise "cpu"): keep where z ≤ Φ⁻¹(0.9), scaled by 1/0.9; None
    otherwise."""
    if sc.noise != "cpu":
        return None
    return ((aux.host_values(device) <= 1.2815516) / 0.9).to(dtype)


def loss_tcn(sc, net, inp, hp, aux):
    x, y = inp
    mask = host_dropout(sc, aux, x.device, x.dtype)
    return F.cross_entropy(net(x, mask).float(), y, label_smoothing=0.1)


def loss_tab(sc, net, inp, hp, aux):
    cat, num, y = inp
    mask = host_dropout(sc, aux, num.device, num.dtype)
    return F.binary_cross_entropy_with_logits(net(cat, num, mask).float(), y.float())


def loss_gru(sc, net, inp, hp, aux):
    tok, y = inp
    mask = host_dropout(sc, aux, tok.device, net.head.weight.dtype)
    return F.cross_entropy(net(tok, mask).float(), y)


def loss_convnext(sc, net, inp, hp, aux):
    x, y = inp
    mask = host_dropout(sc, aux, x.device, x.dtype)
    return F.cross_entropy(net(x, mask).float(), y, label_smoothing=0.1)


def loss_lstm(sc, net, inp, hp, aux):
    tok, tgt = inp
    return F.cross_entropy(net(tok).float().reshape(-1, LSTMLM.V), tgt.reshape(-1))


def loss_vae(sc, net, inp, hp, aux):
    """Reconstruction plus beta times the KL divergence; beta is 100 times
    the aux weight (1.0, lowered to 0.2 where the scenario anneals it)."""
    (x,) = inp
    if sc.noise == "cpu":  # eps drawn with numpy into a pinned buffer
        eps = aux.host_values(x.device).to(x.dtype)
    else:
        eps = torch.randn(x.shape[0], VAE.Z, device=x.device, dtype=x.dtype)  # the default generator: graph-safe
    recon, mu, logvar = net(x, eps)
    rec = F.mse_loss(recon.float(), x.float(), reduction="sum") / x.shape[0]
    kl = -0.5 * torch.sum(1 + logvar.float() - mu.float() ** 2 - logvar.float().exp()) / x.shape[0]
    beta = 100 * (aux.aux_w if sc.aux == "tensor" else hp.aux_w)
    return rec + beta * kl


def loss_clr(sc, net, inp, hp, aux):
    """InfoNCE between two noisy views of the batch; the temperature is
    0.1 + 20 times the aux weight (0.3, lowered to 0.14 where the scenario
    anneals it)."""
    (x,) = inp
    if sc.noise == "cpu":  # the views' noise drawn with numpy into a pinned buffer
        noise = aux.host_values(x.device).to(x.dtype)
    else:
        noise = torch.randn(2, *x.shape, device=x.device, dtype=x.dtype)  # the default generator: graph-safe
    z1, z2 = net(x + 0.2 * noise[0]), net(x + 0.2 * noise[1])
    tau = 0.1 + 20 * (aux.aux_w if sc.aux == "tensor" else hp.aux_w)
    logits = z1 @ z2.t() / tau
    target = torch.arange(x.shape[0], device=x.device)
    return 0.5 * (F.cross_entropy(logits, target) + F.cross_entropy(logits.t(), target))


def loss_gnn(sc, net, inp, hp, aux):
    x, adj, y = inp
    mask = host_dropout(sc, aux, x.device, x.dtype)
    return F.cross_entropy(net(x, adj, mask).float(), y)


FAMILIES = {
    "vit": dict(make=lambda sc: ViT(drop=sc.dropout), batch=batch_vit, loss=loss_vit, optim="adamw", lr=1e-3,
                ckpt=1000),
    "resnet_bn": dict(make=lambda sc: ResNetBN(conv_bias=sc.conv_bias), batch=batch_resnet, loss=loss_resnet, optim="sgd", lr=0.05,
                      ckpt=1200),
    "unet_gn": dict(make=lambda sc: UNetGN(), batch=batch_unet, loss=loss_unet, optim="adamw", lr=1e-3, ckpt=800,
                    ema=True),
    "moe": dict(make=lambda sc: MoELM(k=sc.topk), batch=batch_moe, loss=loss_moe, optim="adam", lr=2e-3, ckpt=1000),
    "kv_decoder": dict(make=lambda sc: KVDecoder(), batch=batch_decoder, loss=loss_decoder, optim="adamw", lr=3e-3,
                       ckpt=400),
    "tcn": dict(make=lambda sc: TCN(drop=sc.dropout), batch=batch_tcn, loss=loss_tcn, optim="sgd", lr=0.05, ckpt=600,
                host_shape=(BATCH, TCN.C, TCN.T)),
    "tab": dict(make=lambda sc: Tabular(drop=sc.dropout), batch=batch_tab, loss=loss_tab, optim="adamw", lr=3e-3,
                ckpt=500, host_shape=(BATCH, Tabular.H)),
    "vae": dict(make=lambda sc: VAE(), batch=batch_vae, loss=loss_vae, optim="adam", lr=2e-3, ckpt=400,
                host_shape=(BATCH, VAE.Z)),
    "clr": dict(make=lambda sc: CLR(), batch=batch_clr, loss=loss_clr, optim="adamw", lr=2e-3, ckpt=300,
                host_shape=(2, BATCH, CLR.X)),
    "gnn": dict(make=lambda sc: GCN(), batch=batch_gnn, loss=loss_gnn, optim="adam", lr=2e-3, ckpt=700,
                host_shape=(BATCH, GCN.V, GCN.H)),
    "gru": dict(make=lambda sc: GRUSeq(drop=sc.dropout), batch=batch_gru, loss=loss_gru, optim="adam", lr=3e-3,
                ckpt=500, host_shape=(BATCH, GRUSeq.H)),
    "lstm": dict(make=lambda sc: LSTMLM(), batch=batch_lstm, loss=loss_lstm, optim="adamw", lr=3e-3, ckpt=400),
    "convnext": dict(make=lambda sc: ConvNeXt(drop=sc.dropout), batch=batch_convnext, loss=loss_convnext,
                     optim="adamw", lr=2e-3, ckpt=600, host_shape=(BATCH, ConvNeXt.C)),
}


# --------------------------------------------------------------------------
# scenarios


@dataclass
class Sc:
    name: str
    family: str
    what: str
    bug: str | None = None
    causes: tuple = ()
    start: str = "resume"        # resume (from the family's checkpoint) | scratch (the recipe from step 0)
    capture: str = "graph"       # graph (whole step) | callables (make_graphed_callables on the model)
    prec: str = "fp32"           # fp32 | tf32 | bf16 | autocast | fp16 (infer and kv_decoder only)
    optim: str | None = None     # scratch runs only: sgd | nesterov | adam | adamw | rmsprop | nadam | radam | adamax
    fused: bool = False          # graphed AdamW/Adam fused (capturable) instead of foreach capturable
    wd_split: bool = False       # AdamW in two param groups: weight decay on the matrices only (scratch runs)
    lr_tensor: bool = False      # graphed: the learning rate a device tensor (a schedule fills it)
    sched: tuple = ()            # () | ("cosine",) | ("drop", step, factor) | ("onecycle", from, steps):
                                 # OneCycleLR's annealing (lr down if lr_tensor, momentum 0.85 -> 0.95)
    clip: bool = False
    style: str = "pt"            # dump style, see collect()
    stepdir: str = "step_{:06d}"  # st style: the per-step directory name
    npz_params: str = "named"    # npz: params from named_parameters, or "state_dict" (buffers under params/)
    dump_warmup: bool = False    # dump the warm-up steps too (first dumped step = the checkpoint's)
    n: int = 5                   # steps after the warm-up (or decode steps)
    every: int = 1
    dropout: float = 0.0
    mixup: bool = False
    ema: bool = False
    ema_switch: int | None = None      # EMA decay 0.99 -> 0.999 from this step
    ema_warmup: bool = False     # EMA decay min(0.999, (1 + k)/(10 + k)) at step k, as timm's EMA warm-up
    momentum_switch: int | None = None  # BatchNorm momentum 0.1 -> 0.01 from this step
    aux: str = "float"           # moe aux-loss weight: a Python float or a device tensor
    aux_switch: int | None = None  # aux weight 0.01 -> 0.002 from this step
    aux_decay: float | None = None  # instead: aux weight 0.01 x this^(k - aux_switch + 1) from aux_switch (annealed)
    aux_until: int | None = None   # aux loss only while step < this (a Python branch)
    topk: int = 2
    timestep: str = "device"     # unet: per-sample timesteps on the device, or one drawn in Python
    noise: str = "device"        # unet: noise from the default generator, or numpy via a pinned buffer
    partial_at: int | None = None  # an epoch's last batch (6 rows) at this step
    pos_kind: str = "tensor"     # decoder: position a device tensor or a Python int
    gens: int = 1                # decoder: generations, the cache emptied between them
    recapture: bool = False      # correct runs that capture again when a captured Python value changes
    onset: int | None = None     # the step at which the bug's cause first acts (for a check only)
    curve: bool = False          # keep the loss of every step only (a loss-curve pair, --curves)
    conv_bias: bool = False      # resnet_bn: convolutions with a bias ahead of BatchNorm (scratch runs)
    baseline: bool = False       # also write baseline/ (the eager run from nudged weights) and pass it
    of: str = "resnet_bn"        # infer: the trained family whose checkpoint is served
    prior_at: int | None = None  # infer: the prior adjustment set at this batch
    nondet: bool = False         # correct runs only: PyTorch's default kernels (no deterministic algorithms,
                                 # cuDNN benchmark on), as most loops run
    sdpa: bool = False           # attention through F.scaled_dot_product_attention (flash or memory-efficient)

    @property
    def twin_recaptures(self):
        return self.bug in RECAPTURE_FIX


# torch 1.13 on the CPU cannot run these families in bf16 (--cpu only)
CPU_FP32 = {"unet_gn": "its ConvTranspose2d gives a wrong shape in bf16 and GroupNorm fails under CPU autocast",
            "tcn": "its LayerNorm fails under CPU autocast", "clr": "its LayerNorm fails under CPU autocast",
            "gnn": "its LayerNorm fails under CPU autocast", "gru": "its LayerNorm fails under CPU autocast",
            "convnext": "its LayerNorm fails under CPU autocast"}

# bugs the --cpu simulation cannot show as they are: host work inside the
# captured step runs again at each simulated replay, and torch.empty on the
# CPU is the heap's memory, not the graph pool's
REAL_GRAPH_ONLY = {"cpu_noise", "uninit_combine", "uninit_pad", "cache_rebuilt", "prior_rebound", "state_rebound"}

RECAPTURE_FIX = {"captured_lr", "cycled_momentum", "bn_momentum", "ema_decay", "aux_weight", "aux_branch",
                 "mixup_lambda", "python_timestep", "captured_pos"}


def scenarios() -> list[Sc]:
    S = Sc
    return [
        # ---------------- vit
        S("vit_recipe_fp32_ok", "vit", "the recipe from step 0, Adam, fp32, torch.save dict per step",
          start="scratch", optim="adam"),
        S("vit_resume_autocast_cosine_ok", "vit", "resume at 1000, autocast, AdamW with a cosine lr (tensor), "
          "clipping, np.savez per step", prec="autocast", lr_tensor=True, sched=("cosine",), clip=True,
          style="npz"),
        S("vit_resume_bf16_dropout_ok", "vit", "resume, pure bf16, dropout 0.1 (graph-safe RNG), safetensors per "
          "kind in global_step<k>/, warm-up dumped", prec="bf16", dropout=0.1, style="st",
          stepdir="global_step{}", dump_warmup=True),
        S("vit_callables_tf32_ok", "vit", "make_graphed_callables on the model, TF32 in both, params-only "
          "ckpt_<k>.pt every 2 steps", capture="callables", prec="tf32", style="pt_ckpt", n=10, every=2),
        S("vit_resume_dropout_helper_ok", "vit", "resume, fp32, dropout 0.1, the graphdiff_dump helper's tree",
          dropout=0.1, style="helper"),
        S("vit_mixup_frozen", "vit", "mixup lambda drawn with numpy in the loop, read as a Python float by the "
          "captured step", bug="mixup_lambda", causes=("frozen_rng", "captured_scalar"), mixup=True),
        S("vit_stale_input", "vit", "static_x = x instead of copy_, autocast, np.savez", bug="stale_input",
          causes=("stale_input",), prec="autocast", style="npz"),
        S("vit_autocast_cache", "vit", "one autocast region (cache on) around warm-up and capture, safetensors",
          bug="autocast_cache", causes=("autocast_cache",), prec="autocast", style="st"),
        S("vit_lr_drop_captured", "vit", "a float lr dropped x0.1 at step 1005 after capture, warm-up dumped",
          bug="captured_lr", causes=("captured_scalar",), sched=("drop", 1005, 0.1), dump_warmup=True,
          onset=1005),
        # ---------------- resnet_bn
        S("resnet_bn_resume_fp32_sgd_ok", "resnet_bn", "resume at 1200, SGD momentum, torch.save dict per step "
          "(BatchNorm buffers inside model/)"),
        S("resnet_bn_recipe_tf32_adam_ok", "resnet_bn", "the recipe from step 0, TF32, Adam, np.savez of the "
          "state_dict (buffers under params/)", start="scratch", optim="adam", prec="tf32", style="npz",
          npz_params="state_dict"),
        S("resnet_bn_resume_bf16_sgd_ok", "resnet_bn", "resume, pure bf16, SGD momentum, safetensors per kind",
          prec="bf16", style="st"),
        S("resnet_bn_milestone_recapture_ok", "resnet_bn", "SGD lr x0.1 at 1205 (a float), graph captured again "
          "at the milestone, params-only ckpt_<k>.pt, warm-up dumped", sched=("drop", 1205, 0.1), recapture=True,
          style="pt_ckpt", dump_warmup=True),
        S("resnet_bn_momentum_recapture_ok", "resnet_bn", "BatchNorm momentum 0.1 -> 0.01 at 1205, graph captured "
          "again, .npy tree with buffers/", momentum_switch=1205, recapture=True, style="npytree",
          dump_warmup=True),
        S("resnet_bn_helper_autocast_ok", "resnet_bn", "resume, autocast, the graphdiff_dump helper's tree",
          prec="autocast", style="helper"),
        S("resnet_bn_convbias_buffers_ok", "resnet_bn", "the recipe from step 0, convolutions with a bias ahead "
          "of BatchNorm, Adam, .npy tree with buffers/", start="scratch", optim="adam", conv_bias=True,
          style="npytree", n=8),
        S("resnet_bn_convbias_state_dict_ok", "resnet_bn", "the recipe from step 0, convolutions with a bias ahead "
          "of BatchNorm, Adam, TF32, torch.save dict per step (buffers inside model/), judged with a baseline",
          start="scratch", optim="adam", prec="tf32", conv_bias=True, n=8, baseline=True),
        S("resnet_bn_momentum_after_capture", "resnet_bn", "bn.momentum = 0.01 set at 1205 after capture: only "
          "running stats depart", bug="bn_momentum", causes=("captured_scalar",), momentum_switch=1205,
          dump_warmup=True, onset=1205),
        S("resnet_bn_momentum_helper", "resnet_bn", "the same momentum bug dumped by the graphdiff_dump helper",
          bug="bn_momentum", causes=("captured_scalar",), momentum_switch=1205, style="helper", onset=1205),
        S("resnet_bn_milestone_captured", "resnet_bn", "SGD lr x0.1 at 1205 (a float) after capture, np.savez of "
          "the state_dict", bug="captured_lr", causes=("captured_scalar",), sched=("drop", 1205, 0.1),
          style="npz", npz_params="state_dict", onset=1205),
        S("resnet_bn_grad_accumulation", "resnet_bn", "no zero_grad(set_to_none=True) before capture: the "
          "captured backward adds to the warm-up's grads", bug="grad_accumulation", causes=("grad_accumulation",)),
        S("resnet_bn_input_lag", "resnet_bn", "the batch copied after replay, safetensors", bug="input_lag",
          causes=("input_lag",), style="st"),
        S("resnet_bn_output_aliasing", "resnet_bn", "dumps written after the loop, grads and loss kept by "
          "reference (model cloned)", bug="output_aliasing", causes=("output_aliasing",)),
        S("resnet_bn_partial_batch", "resnet_bn", "an epoch's last batch of 6 at 1206 copied into static_x[:6]",
          bug="dynamic_shape", causes=("dynamic_shape",), partial_at=1206, style="npz", onset=1206),
        # ---------------- unet_gn
        S("unet_gn_resume_fp32_ema_ok", "unet_gn", "resume at 800, AdamW, EMA captured, torch.save dict with "
          "ema", ema=True),
        S("unet_gn_resume_bf16_ema_ok", "unet_gn", "resume, pure bf16 model, fp32 EMA, np.savez (.float())",
          prec="bf16", ema=True, style="npz"),
        S("unet_gn_autocast_ema_ok", "unet_gn", "resume, autocast, ema.safetensors per step, warm-up dumped",
          prec="autocast", ema=True, style="st", dump_warmup=True),
        S("unet_gn_callables_ok", "unet_gn", "make_graphed_callables on the UNet, optimizer and EMA eager, "
          "params-only ckpt with ema.* every 2 steps", capture="callables", ema=True, style="pt_ckpt", n=10,
          every=2),
        S("unet_gn_ema_switch_recapture_ok", "unet_gn", "EMA decay 0.99 -> 0.999 at 806, graph captured again, "
          "model_<k>.safetensors with ema.*", ema=True, ema_switch=806, recapture=True, style="st_ckpt",
          dump_warmup=True),
        S("unet_gn_recipe_tf32_ok", "unet_gn", "the recipe from step 0, TF32, .npy tree with ema/", start="scratch",
          prec="tf32", ema=True, style="npytree"),
        S("unet_gn_ema_decay_captured", "unet_gn", "EMA decay switched 0.99 -> 0.999 at 806 after capture: only "
          "EMA weights depart", bug="ema_decay", causes=("captured_scalar",), ema=True, ema_switch=806,
          dump_warmup=True, onset=806),
        S("unet_gn_python_timestep", "unet_gn", "one diffusion timestep per batch from Python's random, baked at "
          "capture", bug="python_timestep", causes=("frozen_rng", "captured_scalar"), timestep="python", ema=True,
          style="npz"),
        S("unet_gn_cpu_noise", "unet_gn", "noise drawn with numpy into a pinned buffer inside the captured step",
          bug="cpu_noise", causes=("frozen_rng",), noise="cpu", ema=True, style="st"),
        S("unet_gn_grad_accumulation", "unet_gn", "no zero_grad(set_to_none=True) before capture, autocast, "
          "np.savez", bug="grad_accumulation", causes=("grad_accumulation",), prec="autocast", ema=True,
          style="npz"),
        # ---------------- moe
        S("moe_recipe_top2_fp32_ok", "moe", "the recipe from step 0, top-2, Adam fused (capturable), torch.save "
          "dict", start="scratch", fused=True),
        S("moe_resume_top1_autocast_ok", "moe", "resume at 1000, top-1, autocast, np.savez", topk=1,
          prec="autocast", style="npz"),
        S("moe_resume_top2_bf16_ok", "moe", "resume, top-2, pure bf16, safetensors per kind", prec="bf16",
          style="st"),
        S("moe_aux_anneal_tensor_ok", "moe", "aux weight 0.01 -> 0.002 at 1005 held in a device tensor",
          aux="tensor", aux_switch=1005),
        S("moe_callables_top2_ok", "moe", "make_graphed_callables on the model, optimizer eager, params-only "
          "ckpt_<k>.pt", capture="callables", style="pt_ckpt", n=6),
        S("moe_uninit_combine", "moe", "the experts' combine buffer from torch.empty_like", bug="uninit_combine",
          causes=("uninitialized_memory",)),
        S("moe_aux_branch_captured", "moe", "aux loss only while step < 1005, a Python if decided at capture, "
          "np.savez, warm-up dumped", bug="aux_branch", causes=("captured_branch",), aux_until=1005, style="npz",
          dump_warmup=True, onset=1005),
        S("moe_aux_weight_captured", "moe", "aux weight 0.01 -> 0.002 at 1005 as a Python float after capture",
          bug="aux_weight", causes=("captured_scalar",), aux_switch=1005, onset=1005),
        S("moe_grad_accumulation", "moe", "no zero_grad(set_to_none=True) before capture, safetensors",
          bug="grad_accumulation", causes=("grad_accumulation",), style="st"),
        S("moe_stale_input", "moe", "static_x = x, top-1, pure bf16, np.savez (.float())", bug="stale_input",
          causes=("stale_input",), topk=1, prec="bf16", style="npz"),
        # ---------------- kv_decoder (inference)
        S("kv_decoder_fp32_ok", "kv_decoder", "greedy decoding, fp32, pos_<t>.pt", style="decode_pt", n=12),
        S("kv_decoder_bf16_ok", "kv_decoder", "greedy decoding, pure bf16, gen_<t>.npz (.float())", prec="bf16",
          style="decode_npz", n=12),
        S("kv_decoder_autocast_ok", "kv_decoder", "greedy decoding, autocast, step_<t>/outputs.safetensors",
          prec="autocast", style="decode_st", n=12),
        S("kv_decoder_tf32_ok", "kv_decoder", "greedy decoding, TF32, pos_<t>.pt", prec="tf32", style="decode_pt",
          n=12),
        S("kv_decoder_output_aliasing", "kv_decoder", "generated.append(static_logits, static_next): saved after "
          "the loop", bug="output_aliasing", causes=("output_aliasing",), style="decode_pt", n=12),
        S("kv_decoder_stale_token", "kv_decoder", "static_tok = next_tok instead of copy_", bug="stale_input",
          causes=("stale_input",), style="decode_npz", n=12),
        S("kv_decoder_captured_pos", "kv_decoder", "the decode position a Python int in the captured step",
          bug="captured_pos", causes=("captured_scalar",), pos_kind="int", style="decode_st", n=12),
        S("kv_decoder_uninit_pad", "kv_decoder", "the padded logits buffer from torch.empty", bug="uninit_pad",
          causes=("uninitialized_memory",), style="decode_pt", n=12),
        S("kv_decoder_cache_rebuilt", "kv_decoder", "two generations; the cache rebuilt (kc = torch.zeros_like(kc)) "
          "instead of zeroed before the second, the first one's graph replayed", bug="cache_rebuilt",
          causes=("reassigned_tensor",), style="decode_pt", n=12, gens=2),
        # ---------------- tcn (added after the detectors; scored before they were revised on it)
        S("tcn_resume_fp32_ok", "tcn", "resume at 600, SGD momentum, torch.save dict per step"),
        S("tcn_resume_autocast_npz_ok", "tcn", "resume, autocast, np.savez per step", prec="autocast", style="npz"),
        S("tcn_resume_bf16_st_ok", "tcn", "resume, pure bf16, safetensors per kind", prec="bf16", style="st"),
        S("tcn_dropout_ok", "tcn", "resume, dropout 0.1 (graph-safe RNG), torch.save dict", dropout=0.1),
        S("tcn_recipe_tf32_adamw_ok", "tcn", "the recipe from step 0, TF32, AdamW (capturable), np.savez",
          start="scratch", prec="tf32", optim="adamw", style="npz"),
        S("tcn_clip_ok", "tcn", "resume, gradient clipping (max norm 1), safetensors per kind", clip=True,
          style="st"),
        S("tcn_numpy_dropout", "tcn", "a dropout mask drawn with numpy into a pinned buffer inside the captured "
          "step", bug="cpu_noise", causes=("frozen_rng",), noise="cpu"),
        S("tcn_stale_input", "tcn", "static_x = x instead of copy_, autocast, np.savez", bug="stale_input",
          causes=("stale_input",), prec="autocast", style="npz"),
        S("tcn_input_lag", "tcn", "the batch copied into the static input after the replay, safetensors",
          bug="input_lag", causes=("input_lag",), style="st"),
        S("tcn_lr_drop_captured", "tcn", "a float lr dropped x0.1 at step 605 after capture", bug="captured_lr",
          causes=("captured_scalar",), sched=("drop", 605, 0.1), onset=605),
        S("tcn_grad_accumulation", "tcn", "no zero_grad(set_to_none=True) before capture, np.savez",
          bug="grad_accumulation", causes=("grad_accumulation",), style="npz"),
        S("tcn_kept_by_reference", "tcn", "dumps written after the loop, grads and loss kept by reference",
          bug="output_aliasing", causes=("output_aliasing",)),
        S("tcn_partial_batch", "tcn", "an epoch's last batch of 6 at 605 copied into static_x[:6], np.savez",
          bug="dynamic_shape", causes=("dynamic_shape",), partial_at=605, style="npz", onset=605),
        # ---------------- tab (added after the revision on tcn; scored before the one on it)
        S("tab_resume_fp32_ok", "tab", "resume at 500, AdamW, BatchNorm1d, torch.save dict per step"),
        S("tab_resume_autocast_ok", "tab", "resume, autocast, safetensors per kind", prec="autocast", style="st"),
        S("tab_dropout_npz_ok", "tab", "resume, dropout 0.1 (graph-safe RNG), np.savez", dropout=0.1, style="npz"),
        S("tab_momentum_recapture_ok", "tab", "BatchNorm momentum 0.1 -> 0.01 at 505, graph captured again",
          momentum_switch=505, recapture=True),
        S("tab_warmup_dumped_ok", "tab", "resume, warm-up dumped, np.savez", dump_warmup=True, style="npz"),
        S("tab_numpy_dropout", "tab", "a dropout mask drawn with numpy into a pinned buffer inside the captured step",
          bug="cpu_noise", causes=("frozen_rng",), noise="cpu", style="st"),
        S("tab_numpy_dropout_warmup", "tab", "the numpy dropout mask of tab_numpy_dropout with the warm-up steps "
          "dumped, np.savez", bug="cpu_noise", causes=("frozen_rng",), noise="cpu", dump_warmup=True, style="npz"),
        S("tab_stale_input", "tab", "static inputs rebound instead of copied, torch.save dict", bug="stale_input",
          causes=("stale_input",)),
        S("tab_input_lag", "tab", "the batch copied into the static inputs after the replay, np.savez",
          bug="input_lag", causes=("input_lag",), style="npz"),
        S("tab_lr_drop_captured", "tab", "a float lr dropped x0.1 at step 505 after capture, safetensors",
          bug="captured_lr", causes=("captured_scalar",), sched=("drop", 505, 0.1), style="st", onset=505),
        S("tab_momentum_after_capture", "tab", "bn.momentum = 0.01 set at 505 after capture", bug="bn_momentum",
          causes=("captured_scalar",), momentum_switch=505, onset=505),
        S("tab_grad_accumulation", "tab", "no zero_grad(set_to_none=True) before capture, autocast, safetensors",
          bug="grad_accumulation", causes=("grad_accumulation",), prec="autocast", style="st"),
        S("tab_kept_by_reference", "tab", "dumps written after the loop, grads and loss kept by reference",
          bug="output_aliasing", causes=("output_aliasing",)),
        S("tab_partial_batch", "tab", "an epoch's last batch of 6 at 505 copied into the static inputs[:6]",
          bug="dynamic_shape", causes=("dynamic_shape",), partial_at=505, onset=505),
        # ---------------- vae (added after the revision on tab; scored before the one on it)
        S("vae_resume_fp32_ok", "vae", "resume at 400, Adam, eps from the default generator, torch.save dict"),
        S("vae_resume_autocast_ok", "vae", "resume, autocast, np.savez per step", prec="autocast", style="npz"),
        S("vae_resume_bf16_ok", "vae", "resume, pure bf16, safetensors per kind", prec="bf16", style="st"),
        S("vae_beta_tensor_ok", "vae", "KL weight 1.0 -> 0.2 at 405 held in a device tensor", aux="tensor",
          aux_switch=405),
        S("vae_recipe_adamw_ok", "vae", "the recipe from step 0, AdamW (capturable), np.savez", start="scratch",
          optim="adamw", style="npz"),
        S("vae_warmup_dumped_ok", "vae", "resume, warm-up dumped, safetensors", dump_warmup=True, style="st"),
        S("vae_numpy_eps", "vae", "eps drawn with numpy into a pinned buffer inside the captured step",
          bug="cpu_noise", causes=("frozen_rng",), noise="cpu"),
        S("vae_beta_captured", "vae", "KL weight 1.0 -> 0.2 at 405 as a Python float after capture, np.savez",
          bug="aux_weight", causes=("captured_scalar",), aux_switch=405, style="npz", onset=405),
        S("vae_stale_input", "vae", "static_x = x instead of copy_, pure bf16, safetensors", bug="stale_input",
          causes=("stale_input",), prec="bf16", style="st"),
        S("vae_input_lag", "vae", "the batch copied into the static input after the replay", bug="input_lag",
          causes=("input_lag",)),
        S("vae_grad_accumulation", "vae", "no zero_grad(set_to_none=True) before capture, np.savez",
          bug="grad_accumulation", causes=("grad_accumulation",), style="npz"),
        S("vae_kept_by_reference", "vae", "dumps written after the loop, grads and loss kept by reference",
          bug="output_aliasing", causes=("output_aliasing",)),
        S("vae_partial_batch", "vae", "an epoch's last batch of 6 at 405 copied into static_x[:6], safetensors",
          bug="dynamic_shape", causes=("dynamic_shape",), partial_at=405, style="st", onset=405),
        # ---------------- clr (added after the revision on vae; no revision followed)
        S("clr_resume_fp32_ok", "clr", "resume at 300, AdamW, views' noise from the default generator, torch.save"),
        S("clr_resume_autocast_ok", "clr", "resume, autocast, safetensors per kind", prec="autocast", style="st"),
        S("clr_resume_bf16_ok", "clr", "resume, pure bf16, np.savez", prec="bf16", style="npz"),
        S("clr_tau_tensor_ok", "clr", "temperature 0.3 -> 0.14 at 305 held in a device tensor", aux="tensor",
          aux_switch=305),
        S("clr_warmup_dumped_ok", "clr", "resume, warm-up dumped, np.savez", dump_warmup=True, style="npz"),
        S("clr_numpy_views", "clr", "the views' noise drawn with numpy into a pinned buffer inside the captured "
          "step, safetensors", bug="cpu_noise", causes=("frozen_rng",), noise="cpu", style="st"),
        S("clr_tau_captured", "clr", "temperature 0.3 -> 0.14 at 305 as a Python float after capture",
          bug="aux_weight", causes=("captured_scalar",), aux_switch=305, onset=305),
        S("clr_stale_input", "clr", "static_x = x instead of copy_, np.savez", bug="stale_input",
          causes=("stale_input",), style="npz"),
        S("clr_input_lag", "clr", "the batch copied into the static input after the replay, autocast, safetensors",
          bug="input_lag", causes=("input_lag",), prec="autocast", style="st"),
        S("clr_grad_accumulation", "clr", "no zero_grad(set_to_none=True) before capture", bug="grad_accumulation",
          causes=("grad_accumulation",)),
        S("clr_kept_by_reference", "clr", "dumps written after the loop, grads and loss kept by reference",
          bug="output_aliasing", causes=("output_aliasing",)),
        S("clr_partial_batch", "clr", "an epoch's last batch of 6 at 305 copied into static_x[:6], np.savez",
          bug="dynamic_shape", causes=("dynamic_shape",), partial_at=305, style="npz", onset=305),
        # ---------------- gnn (added after the revision on clr; scored before any change)
        S("gnn_resume_fp32_ok", "gnn", "resume at 700, Adam, dense adjacency, torch.save dict per step"),
        S("gnn_resume_autocast_ok", "gnn", "resume, autocast, np.savez per step", prec="autocast", style="npz"),
        S("gnn_resume_bf16_ok", "gnn", "resume, pure bf16, safetensors per kind", prec="bf16", style="st"),
        S("gnn_recipe_sgd_ok", "gnn", "the recipe from step 0, SGD momentum, np.savez", start="scratch",
          optim="sgd", style="npz"),
        S("gnn_warmup_dumped_ok", "gnn", "resume, warm-up dumped, safetensors", dump_warmup=True, style="st"),
        S("gnn_numpy_dropout", "gnn", "a dropout mask drawn with numpy into a pinned buffer inside the captured step",
          bug="cpu_noise", causes=("frozen_rng",), noise="cpu", style="npz"),
        S("gnn_stale_input", "gnn", "static inputs rebound instead of copied, safetensors", bug="stale_input",
          causes=("stale_input",), style="st"),
        S("gnn_input_lag", "gnn", "the batch copied into the static inputs after the replay, autocast",
          bug="input_lag", causes=("input_lag",), prec="autocast"),
        S("gnn_lr_drop_captured", "gnn", "a float lr dropped x0.1 at step 705 after capture, np.savez",
          bug="captured_lr", causes=("captured_scalar",), sched=("drop", 705, 0.1), style="npz", onset=705),
        S("gnn_grad_accumulation", "gnn", "no zero_grad(set_to_none=True) before capture, safetensors",
          bug="grad_accumulation", causes=("grad_accumulation",), style="st"),
        S("gnn_kept_by_reference", "gnn", "dumps written after the loop, grads and loss kept by reference",
          bug="output_aliasing", causes=("output_aliasing",)),
        S("gnn_partial_batch", "gnn", "an epoch's last batch of 6 at 705 copied into the static inputs[:6]",
          bug="dynamic_shape", causes=("dynamic_shape",), partial_at=705, onset=705),
        # ---------------- dumps every 4 steps (added after the revision on infer; scored before any change)
        S("gnn_every4_ok", "gnn", "resume, dumps every 4 steps, torch.save dict", n=16, every=4),
        S("tab_every4_autocast_ok", "tab", "resume, autocast, dumps every 4 steps, safetensors", prec="autocast",
          style="st", n=16, every=4),
        S("gnn_every4_stale_input", "gnn", "static inputs rebound instead of copied, dumps every 4 steps, np.savez",
          bug="stale_input", causes=("stale_input",), style="npz", n=16, every=4),
        S("gnn_every4_input_lag", "gnn", "the batch copied into the static inputs after the replay, dumps every 4 "
          "steps", bug="input_lag", causes=("input_lag",), n=16, every=4),
        S("tab_every4_lr_drop_captured", "tab", "a float lr dropped x0.1 at step 509 after capture, dumps every 4 "
          "steps", bug="captured_lr", causes=("captured_scalar",), sched=("drop", 509, 0.1), n=16, every=4,
          onset=511),
        S("gnn_every4_grad_accumulation", "gnn", "no zero_grad(set_to_none=True) before capture, dumps every 4 "
          "steps, safetensors", bug="grad_accumulation", causes=("grad_accumulation",), style="st", n=16, every=4),
        S("tcn_every4_kept_by_reference", "tcn", "dumps written after the loop, grads and loss kept by reference, "
          "every 4 steps", bug="output_aliasing", causes=("output_aliasing",), n=16, every=4),
        S("tab_every4_numpy_dropout", "tab", "a dropout mask drawn with numpy into a pinned buffer inside the "
          "captured step, dumps every 4 steps, np.savez", bug="cpu_noise", causes=("frozen_rng",), noise="cpu",
          style="npz", n=16, every=4),
        S("tab_every4_momentum_after_capture", "tab", "bn.momentum = 0.01 set at 509 after capture, dumps every 4 "
          "steps", bug="bn_momentum", causes=("captured_scalar",), momentum_switch=509, n=16, every=4, onset=511),
        S("tcn_every4_partial_batch", "tcn", "an epoch's last batch of 6 at 609 copied into static_x[:6], dumps "
          "every 4 steps", bug="dynamic_shape", causes=("dynamic_shape",), partial_at=609, n=16, every=4,
          onset=611),
        # ---------------- PyTorch's checkpoint recipe (added after the revision on sparse dumps; scored before any change)
        S("tcn_tutorial_ok", "tcn", "resume, SGD momentum, the general-checkpoint recipe per step", style="tutorial"),
        S("gnn_tutorial_ok", "gnn", "resume, Adam, the general-checkpoint recipe per step", style="tutorial"),
        S("tcn_tutorial_stale_input", "tcn", "static_x = x instead of copy_, the checkpoint recipe",
          bug="stale_input", causes=("stale_input",), style="tutorial"),
        S("gnn_tutorial_input_lag", "gnn", "the batch copied into the static inputs after the replay, the checkpoint "
          "recipe", bug="input_lag", causes=("input_lag",), style="tutorial"),
        S("tab_tutorial_lr_drop_captured", "tab", "a float lr dropped x0.1 at step 505 after capture, the checkpoint "
          "recipe", bug="captured_lr", causes=("captured_scalar",), sched=("drop", 505, 0.1), style="tutorial",
          onset=505),
        S("tcn_tutorial_grad_accumulation", "tcn", "no zero_grad(set_to_none=True) before capture, the checkpoint "
          "recipe", bug="grad_accumulation", causes=("grad_accumulation",), style="tutorial"),
        S("tab_tutorial_momentum_after_capture", "tab", "bn.momentum = 0.01 set at 505 after capture, the "
          "checkpoint recipe", bug="bn_momentum", causes=("captured_scalar",), momentum_switch=505,
          style="tutorial", onset=505),
        S("gnn_tutorial_numpy_dropout", "gnn", "a dropout mask drawn with numpy into a pinned buffer inside the "
          "captured step, the checkpoint recipe", bug="cpu_noise", causes=("frozen_rng",), noise="cpu",
          style="tutorial"),
        S("tcn_tutorial_partial_batch", "tcn", "an epoch's last batch of 6 at 605 copied into static_x[:6], the "
          "checkpoint recipe", bug="dynamic_shape", causes=("dynamic_shape",), partial_at=605, style="tutorial",
          onset=605),
        S("tab_tutorial_kept_by_reference", "tab", "dumps written after the loop, the loss and the optimizer's "
          "state kept by reference, the checkpoint recipe", bug="output_aliasing", causes=("output_aliasing",),
          style="tutorial"),
        # ---------------- infer (added after the revision on gnn; scored before any change)
        S("infer_resnet_fp32_ok", "infer", "the resnet_bn classifier served in eval mode, logits and probabilities "
          "torch.save'd per batch", style="out_pt", n=6),
        S("infer_resnet_autocast_ok", "infer", "served under autocast, np.savez per batch", prec="autocast",
          style="out_npz", n=6),
        S("infer_tab_bf16_ok", "infer", "the tabular classifier served in pure bf16, safetensors per batch", of="tab",
          prec="bf16", style="out_st", n=6),
        S("infer_temp_tensor_ok", "infer", "temperature 1.0 -> 0.6 at batch 3 held in a device tensor", aux="tensor",
          aux_switch=3, style="out_pt", n=6),
        S("infer_prior_inplace_ok", "infer", "a prior adjustment per class set at batch 3 with copy_", prior_at=3,
          style="out_npz", n=6),
        S("infer_stale_input", "infer", "static input rebound to each batch instead of copied", bug="stale_input",
          causes=("stale_input",), style="out_pt", n=6),
        S("infer_tab_input_lag", "infer", "the tabular batch copied into the static inputs after the replay", of="tab",
          bug="input_lag", causes=("input_lag",), style="out_npz", n=6),
        S("infer_kept_by_reference", "infer", "each batch's static outputs kept by reference, written after the loop",
          bug="output_aliasing", causes=("output_aliasing",), style="out_st", n=6),
        S("infer_partial_batch", "infer", "a last batch of 6 at batch 4 copied into the static input[:6], all 8 "
          "output rows written", bug="dynamic_shape", causes=("dynamic_shape",), partial_at=4, style="out_pt", n=5,
          onset=4),
        S("infer_temp_captured", "infer", "temperature 1.0 -> 0.6 at batch 3 as a Python float after capture",
          bug="aux_weight", causes=("captured_scalar",), aux_switch=3, style="out_npz", n=6, onset=3),
        S("infer_prior_rebound", "infer", "the prior adjustment rebound at batch 3 instead of copied",
          bug="prior_rebound", causes=("reassigned_tensor",), prior_at=3, style="out_pt", n=6, onset=3),
        S("infer_numpy_dropout", "infer", "Monte Carlo input dropout drawn with numpy into a pinned buffer inside "
          "the captured forward", bug="cpu_noise", causes=("frozen_rng",), noise="cpu", style="out_st", n=6),
        # ---------------- served temperatures (added after captured_scalar read a temperature from served
        # outputs; scored before any change)
        S("infer_tab_temp_captured", "infer", "the tabular classifier (one logit, a sigmoid) served, temperature "
          "1.0 -> 0.6 at batch 3 as a Python float after capture, safetensors per batch", of="tab",
          bug="aux_weight", causes=("captured_scalar",), aux_switch=3, style="out_st", n=6, onset=3),
        S("infer_resnet_bf16_temp_annealed", "infer", "served in pure bf16, the temperature annealed every "
          "batch from batch 2 (0.9, 0.82, ...) as a Python float after capture, torch.save per batch",
          prec="bf16", bug="aux_weight", causes=("captured_scalar",), aux_switch=2, aux_decay=0.8,
          style="out_pt", n=6, onset=2),
        S("infer_resnet_autocast_temp_captured", "infer", "served under autocast, temperature 1.0 -> 0.6 at "
          "batch 4 as a Python float after capture, np.savez per batch", prec="autocast", bug="aux_weight",
          causes=("captured_scalar",), aux_switch=4, style="out_npz", n=7, onset=4),
        S("infer_tab_temp_annealed_tensor_ok", "infer", "the tabular classifier served, the temperature "
          "annealed every batch from batch 2 in a device tensor, np.savez per batch", of="tab", aux="tensor",
          aux_switch=2, aux_decay=0.8, style="out_npz", n=6),
        S("infer_resnet_bf16_temp_tensor_ok", "infer", "served in pure bf16, temperature 1.0 -> 0.6 at batch 2 "
          "in a device tensor, safetensors per batch", prec="bf16", aux="tensor", aux_switch=2, style="out_st",
          n=6),
        S("infer_tab_prior_rebound", "infer", "the tabular classifier served, its prior adjustment (one logit) "
          "rebound at batch 3 instead of copied", of="tab", bug="prior_rebound", causes=("reassigned_tensor",),
          prior_at=3, style="out_pt", n=6, onset=3),
        # ---------------- decoding dumped sparsely, in bf16, over two generations (added after captured_scalar
        # read served outputs; scored before any change)
        S("kv_decoder_every2_ok", "kv_decoder", "greedy decoding, fp32, every 2nd position dumped, pos_<t>.pt",
          style="decode_pt", n=16, every=2),
        S("kv_decoder_gens2_ok", "kv_decoder", "two generations, the cache zeroed in place between them, "
          "gen_<t>.npz", style="decode_npz", n=10, gens=2),
        S("kv_decoder_every2_captured_pos", "kv_decoder", "the decode position a Python int in the captured step, "
          "every 2nd position dumped", bug="captured_pos", causes=("captured_scalar",), pos_kind="int",
          style="decode_pt", n=16, every=2),
        S("kv_decoder_bf16_captured_pos", "kv_decoder", "the decode position a Python int in the captured step, "
          "pure bf16, safetensors", bug="captured_pos", causes=("captured_scalar",), pos_kind="int", prec="bf16",
          style="decode_st", n=12),
        S("kv_decoder_every2_stale_token", "kv_decoder", "static_tok = next_tok instead of copy_, every 2nd "
          "position dumped", bug="stale_input", causes=("stale_input",), style="decode_npz", n=16, every=2),
        S("kv_decoder_gens2_stale_token", "kv_decoder", "static_tok = next_tok instead of copy_, two generations, "
          "autocast", bug="stale_input", causes=("stale_input",), prec="autocast", style="decode_st", n=10,
          gens=2),
        # ---------------- gru (a GRU cell unrolled over a sequence; added after captured_scalar read served
        # outputs; scored before any change)
        S("gru_resume_fp32_ok", "gru", "resume at 500, Adam, a GRU cell unrolled over 12 tokens, torch.save dict"),
        S("gru_resume_bf16_ok", "gru", "resume, pure bf16, safetensors per kind", prec="bf16", style="st"),
        S("gru_resume_autocast_ok", "gru", "resume, autocast, np.savez per step", prec="autocast", style="npz"),
        S("gru_tutorial_ok", "gru", "resume, Adam, the general-checkpoint recipe per step", style="tutorial"),
        S("gru_every4_dropout_ok", "gru", "resume, dropout 0.1 (graph-safe RNG), dumps every 4 steps", dropout=0.1,
          n=16, every=4),
        S("gru_stale_input", "gru", "static inputs rebound instead of copied, torch.save dict", bug="stale_input",
          causes=("stale_input",)),
        S("gru_input_lag", "gru", "the batch copied into the static inputs after the replay, np.savez",
          bug="input_lag", causes=("input_lag",), style="npz"),
        S("gru_grad_accumulation", "gru", "no zero_grad(set_to_none=True) before capture, safetensors",
          bug="grad_accumulation", causes=("grad_accumulation",), style="st"),
        S("gru_lr_drop_captured", "gru", "a float lr dropped x0.1 at step 505 after capture, bf16, safetensors",
          bug="captured_lr", causes=("captured_scalar",), sched=("drop", 505, 0.1), prec="bf16", style="st",
          onset=505),
        S("gru_numpy_dropout", "gru", "a dropout mask drawn with numpy into a pinned buffer inside the captured "
          "step", bug="cpu_noise", causes=("frozen_rng",), noise="cpu"),
        S("gru_kept_by_reference", "gru", "dumps written after the loop, grads and loss kept by reference",
          bug="output_aliasing", causes=("output_aliasing",)),
        S("gru_tutorial_stale_input", "gru", "static_x = x instead of copy_, the checkpoint recipe",
          bug="stale_input", causes=("stale_input",), style="tutorial"),
        S("gru_tutorial_grad_accumulation", "gru", "no zero_grad(set_to_none=True) before capture, the checkpoint "
          "recipe", bug="grad_accumulation", causes=("grad_accumulation",), style="tutorial"),
        # ---------------- lstm (truncated backpropagation through time, the cell's state carried in buffers
        # from batch to batch; added after the gru family; scored before any change)
        S("lstm_resume_fp32_ok", "lstm", "resume at 400, AdamW, the state carried in place, torch.save dict"),
        S("lstm_resume_bf16_ok", "lstm", "resume, pure bf16, safetensors per kind", prec="bf16", style="st"),
        S("lstm_resume_autocast_ok", "lstm", "resume, autocast, np.savez per step", prec="autocast", style="npz"),
        S("lstm_tutorial_ok", "lstm", "resume, AdamW, the general-checkpoint recipe per step", style="tutorial"),
        S("lstm_state_rebound", "lstm", "self.h = h.detach() instead of self.h.copy_(h): the carried state "
          "rebound in the captured forward, torch.save dict", bug="state_rebound",
          causes=("reassigned_tensor", "stale_input")),
        S("lstm_tutorial_state_rebound", "lstm", "the carried state rebound in the captured forward, the "
          "checkpoint recipe", bug="state_rebound", causes=("reassigned_tensor", "stale_input"), style="tutorial"),
        S("lstm_stale_input", "lstm", "static tokens rebound instead of copied, np.savez", bug="stale_input",
          causes=("stale_input",), style="npz"),
        S("lstm_input_lag", "lstm", "the batch copied into the static tokens after the replay, safetensors",
          bug="input_lag", causes=("input_lag",), style="st"),
        S("lstm_grad_accumulation", "lstm", "no zero_grad(set_to_none=True) before capture", bug="grad_accumulation",
          causes=("grad_accumulation",)),
        S("lstm_lr_drop_captured", "lstm", "a float lr dropped x0.1 at step 405 after capture", bug="captured_lr",
          causes=("captured_scalar",), sched=("drop", 405, 0.1), onset=405),
        S("lstm_kept_by_reference", "lstm", "dumps written after the loop, grads and loss kept by reference",
          bug="output_aliasing", causes=("output_aliasing",)),
        # ---------------- learning rates dropped between sparse dumps (added after a scale of the updates was
        # looked for where they depart beyond the gradients' difference; scored before any change)
        S("gru_every4_lr_drop_captured", "gru", "a float lr dropped x0.1 at step 509 after capture, dumps every 4 "
          "steps", bug="captured_lr", causes=("captured_scalar",), sched=("drop", 509, 0.1), n=16, every=4,
          onset=511),
        S("lstm_every4_lr_drop_captured", "lstm", "a float lr dropped x0.1 at step 409 after capture, dumps every "
          "4 steps, np.savez", bug="captured_lr", causes=("captured_scalar",), sched=("drop", 409, 0.1), n=16,
          every=4, style="npz", onset=411),
        S("resnet_bn_every4_lr_drop_captured", "resnet_bn", "SGD momentum, a float lr dropped x0.1 at step 1209 "
          "after capture, dumps every 4 steps, safetensors", bug="captured_lr", causes=("captured_scalar",),
          sched=("drop", 1209, 0.1), n=16, every=4, style="st", onset=1211),
        S("moe_every2_lr_drop_captured", "moe", "a float lr dropped x0.1 at step 1006 after capture, dumps every 2 "
          "steps", bug="captured_lr", causes=("captured_scalar",), sched=("drop", 1006, 0.1), n=10, every=2,
          onset=1007),
        S("gru_every4_lr_tensor_drop_ok", "gru", "the lr dropped x0.1 at step 509 in a device tensor, dumps every 4 "
          "steps", lr_tensor=True, sched=("drop", 509, 0.1), n=16, every=4),
        S("lstm_every4_grad_accumulation", "lstm", "no zero_grad(set_to_none=True) before capture, dumps every 4 "
          "steps", bug="grad_accumulation", causes=("grad_accumulation",), n=16, every=4),
        # ---------------- optimizer steps across sparse dumps (added after captured_scalar was named from
        # updates departing beyond the gradients' difference by no single scale; scored before any change)
        S("vit_every4_lr_drop_captured", "vit", "a float lr dropped x0.1 at step 1009 after capture, dumps every 4 "
          "steps", bug="captured_lr", causes=("captured_scalar",), sched=("drop", 1009, 0.1), n=16, every=4,
          onset=1011),
        S("tcn_every4_lr_drop_captured", "tcn", "SGD momentum, a float lr dropped x0.1 at step 609 after capture, "
          "dumps every 4 steps, np.savez", bug="captured_lr", causes=("captured_scalar",), sched=("drop", 609, 0.1),
          n=16, every=4, style="npz", onset=611),
        S("vae_every2_lr_drop_captured", "vae", "a float lr dropped x0.1 at step 406 after capture, dumps every 2 "
          "steps, safetensors", bug="captured_lr", causes=("captured_scalar",), sched=("drop", 406, 0.1), n=10,
          every=2, style="st", onset=407),
        S("clr_every4_lr_drop_captured", "clr", "a float lr dropped x0.1 at step 309 after capture, dumps every 4 "
          "steps", bug="captured_lr", causes=("captured_scalar",), sched=("drop", 309, 0.1), n=16, every=4,
          onset=311),
        S("unet_gn_every4_lr_drop_captured", "unet_gn", "a float lr dropped x0.1 at step 809 after capture, EMA "
          "weights, dumps every 4 steps", bug="captured_lr", causes=("captured_scalar",), sched=("drop", 809, 0.1),
          n=16, every=4, onset=811),
        S("clr_every4_ok", "clr", "resume, AdamW, dumps every 4 steps", n=16, every=4),
        S("vit_every4_stale_input", "vit", "static_x = x instead of copy_, dumps every 4 steps", bug="stale_input",
          causes=("stale_input",), n=16, every=4),
        S("tcn_every4_grad_accumulation", "tcn", "SGD momentum, no zero_grad(set_to_none=True) before capture, "
          "dumps every 4 steps", bug="grad_accumulation", causes=("grad_accumulation",), n=16, every=4),
        S("vae_every2_input_lag", "vae", "the batch copied into the static input after the replay, dumps every 2 "
          "steps", bug="input_lag", causes=("input_lag",), n=10, every=2),
        S("unet_gn_every4_numpy_noise", "unet_gn", "noise drawn with numpy into a pinned buffer inside the captured "
          "step, dumps every 4 steps", bug="cpu_noise", causes=("frozen_rng",), noise="cpu", n=16, every=4),
        # ---------------- served in pure fp16 (added after the sparse-dump rules; scored before any change)
        S("infer_resnet_fp16_ok", "infer", "the resnet_bn classifier served in pure fp16 (half()), torch.save per "
          "batch", prec="fp16", style="out_pt", n=6),
        S("infer_tab_fp16_ok", "infer", "the tabular classifier served in pure fp16, safetensors per batch",
          of="tab", prec="fp16", style="out_st", n=6),
        S("infer_resnet_fp16_temp_captured", "infer", "served in pure fp16, temperature 1.0 -> 0.6 at batch 3 as a "
          "Python float after capture, np.savez per batch", prec="fp16", bug="aux_weight",
          causes=("captured_scalar",), aux_switch=3, style="out_npz", n=6, onset=3),
        S("infer_resnet_fp16_stale_input", "infer", "served in pure fp16, static input rebound to each batch "
          "instead of copied", prec="fp16", bug="stale_input", causes=("stale_input",), style="out_pt", n=6),
        S("kv_decoder_fp16_ok", "kv_decoder", "greedy decoding in pure fp16, pos_<t>.pt", prec="fp16",
          style="decode_pt", n=12),
        S("kv_decoder_fp16_captured_pos", "kv_decoder", "the decode position a Python int in the captured step, "
          "pure fp16, gen_<t>.npz", bug="captured_pos", causes=("captured_scalar",), pos_kind="int", prec="fp16",
          style="decode_npz", n=12),
        S("kv_decoder_fp16_stale_token", "kv_decoder", "static_tok = next_tok instead of copy_, pure fp16, "
          "safetensors", bug="stale_input", causes=("stale_input",), prec="fp16", style="decode_st", n=12),
        # ---------------- the checkpoint recipe in other families (added after gradients were derived from
        # the optimizer's saved moments; scored before any change)
        S("resnet_bn_tutorial_ok", "resnet_bn", "resume, SGD momentum with weight decay, the general-checkpoint "
          "recipe per step", style="tutorial"),
        S("resnet_bn_tutorial_input_lag", "resnet_bn", "the batch copied into the static inputs after the replay, "
          "the checkpoint recipe", bug="input_lag", causes=("input_lag",), style="tutorial"),
        S("resnet_bn_tutorial_stale_input", "resnet_bn", "static_x = x instead of copy_, the checkpoint recipe",
          bug="stale_input", causes=("stale_input",), style="tutorial"),
        S("resnet_bn_tutorial_grad_accumulation", "resnet_bn", "no zero_grad(set_to_none=True) before capture, "
          "the checkpoint recipe", bug="grad_accumulation", causes=("grad_accumulation",), style="tutorial"),
        S("vit_tutorial_ok", "vit", "resume, AdamW, the general-checkpoint recipe per step", style="tutorial"),
        S("vit_tutorial_input_lag", "vit", "the batch copied into the static inputs after the replay, the "
          "checkpoint recipe", bug="input_lag", causes=("input_lag",), style="tutorial"),
        S("vit_tutorial_grad_accumulation", "vit", "no zero_grad(set_to_none=True) before capture, the checkpoint "
          "recipe", bug="grad_accumulation", causes=("grad_accumulation",), style="tutorial"),
        S("moe_tutorial_ok", "moe", "resume, Adam, the general-checkpoint recipe per step", style="tutorial"),
        S("moe_tutorial_stale_input", "moe", "static_x = x instead of copy_, the checkpoint recipe",
          bug="stale_input", causes=("stale_input",), style="tutorial"),
        S("clr_tutorial_input_lag", "clr", "the batch copied into the static input after the replay, the "
          "checkpoint recipe", bug="input_lag", causes=("input_lag",), style="tutorial"),
        S("tab_tutorial_stale_input", "tab", "static_x = x instead of copy_, the checkpoint recipe",
          bug="stale_input", causes=("stale_input",), style="tutorial"),
        S("tcn_tutorial_numpy_dropout", "tcn", "a dropout mask drawn with numpy into a pinned buffer inside the "
          "captured step, the checkpoint recipe", bug="cpu_noise", causes=("frozen_rng",), noise="cpu",
          style="tutorial"),
        S("unet_gn_tutorial_numpy_noise", "unet_gn", "noise drawn with numpy into a pinned buffer inside the "
          "captured step, the checkpoint recipe", bug="cpu_noise", causes=("frozen_rng",), noise="cpu",
          style="tutorial"),
        # ---------------- the checkpoint recipe under other precisions, optimizers and intervals (added after
        # the optimizer's moments stood in for gradients in the verdict; scored before any change)
        S("vit_tutorial_bf16_ok", "vit", "resume, pure bf16, AdamW, the checkpoint recipe", prec="bf16",
          style="tutorial"),
        S("moe_tutorial_autocast_ok", "moe", "resume, autocast, Adam, the checkpoint recipe", prec="autocast",
          style="tutorial"),
        S("gnn_tutorial_tf32_ok", "gnn", "resume, TF32, Adam, the checkpoint recipe", prec="tf32",
          style="tutorial"),
        S("resnet_bn_tutorial_every2_ok", "resnet_bn", "resume, SGD momentum, the checkpoint recipe every 2 steps",
          style="tutorial", n=8, every=2),
        S("unet_gn_tutorial_ema_ok", "unet_gn", "resume, AdamW, EMA weights saved beside the model, the checkpoint "
          "recipe", ema=True, style="tutorial"),
        S("clr_tutorial_bf16_ok", "clr", "resume, pure bf16, AdamW, the checkpoint recipe", prec="bf16",
          style="tutorial"),
        S("moe_tutorial_bf16_stale_input", "moe", "static_x = x instead of copy_, pure bf16, the checkpoint recipe",
          bug="stale_input", causes=("stale_input",), prec="bf16", style="tutorial"),
        S("vit_tutorial_autocast_input_lag", "vit", "the batch copied in after the replay, autocast, the "
          "checkpoint recipe", bug="input_lag", causes=("input_lag",), prec="autocast", style="tutorial"),
        S("tcn_tutorial_every2_stale_input", "tcn", "static_x = x instead of copy_, the checkpoint recipe every 2 "
          "steps", bug="stale_input", causes=("stale_input",), style="tutorial", n=8, every=2),
        S("gnn_tutorial_lr_drop_captured", "gnn", "a float lr dropped x0.1 at step 705 after capture, the "
          "checkpoint recipe", bug="captured_lr", causes=("captured_scalar",), sched=("drop", 705, 0.1),
          style="tutorial", onset=705),
        S("unet_gn_tutorial_grad_accumulation", "unet_gn", "no zero_grad(set_to_none=True) before capture, the "
          "checkpoint recipe", bug="grad_accumulation", causes=("grad_accumulation",), style="tutorial"),
        S("resnet_bn_tutorial_momentum_after_capture", "resnet_bn", "bn.momentum = 0.01 set at 1205 after "
          "capture, the checkpoint recipe", bug="bn_momentum", causes=("captured_scalar",), momentum_switch=1205,
          style="tutorial", onset=1205),
        # ---------------- the checkpoint recipe with AdamW in two param groups (weight decay on the matrices
        # only), from step 0 (added after the groups were matched each to the model's order; scored before any
        # change)
        S("vit_tutorial_wdsplit_ok", "vit", "the recipe from step 0, AdamW without decay on biases and norms, the "
          "checkpoint recipe", start="scratch", optim="adamw", wd_split=True, style="tutorial", n=6),
        S("vit_tutorial_wdsplit_bf16_ok", "vit", "the same in pure bf16", start="scratch", optim="adamw",
          wd_split=True, prec="bf16", style="tutorial", n=6),
        S("moe_tutorial_wdsplit_ok", "moe", "the recipe from step 0, AdamW without decay on biases and norms, "
          "the checkpoint recipe", start="scratch", optim="adamw", wd_split=True, style="tutorial", n=6),
        S("vit_tutorial_wdsplit_stale_input", "vit", "static_x = x instead of copy_, AdamW in two groups, the "
          "checkpoint recipe", bug="stale_input", causes=("stale_input",), start="scratch", optim="adamw",
          wd_split=True, style="tutorial", n=6),
        S("moe_tutorial_wdsplit_input_lag", "moe", "the batch copied in after the replay, AdamW in two groups, "
          "the checkpoint recipe", bug="input_lag", causes=("input_lag",), start="scratch", optim="adamw",
          wd_split=True, style="tutorial", n=6),
        S("gnn_tutorial_wdsplit_grad_accumulation", "gnn", "no zero_grad(set_to_none=True) before capture, AdamW "
          "in two groups, the checkpoint recipe", bug="grad_accumulation", causes=("grad_accumulation",),
          start="scratch", optim="adamw", wd_split=True, style="tutorial", n=6),
        # ---------------- Hugging Face Trainer's layout: checkpoint-<k>/pytorch_model.bin and optimizer.pt
        # apart, every step (added after the optimizer's state was judged as gradients in any layout; scored
        # before any change)
        S("moe_hf_ok", "moe", "resume, Adam, checkpoint-<k>/ with pytorch_model.bin and optimizer.pt",
          style="hf"),
        S("vit_hf_bf16_ok", "vit", "resume, pure bf16, AdamW, checkpoint-<k>/ as Hugging Face's Trainer saves "
          "them", prec="bf16", style="hf"),
        S("tab_hf_ok", "tab", "resume, AdamW, checkpoint-<k>/ as Hugging Face's Trainer saves them", style="hf"),
        S("moe_hf_stale_input", "moe", "static_x = x instead of copy_, checkpoint-<k>/ as Hugging Face's "
          "Trainer saves them", bug="stale_input", causes=("stale_input",), style="hf"),
        S("vit_hf_input_lag", "vit", "the batch copied in after the replay, checkpoint-<k>/ as Hugging Face's "
          "Trainer saves them", bug="input_lag", causes=("input_lag",), style="hf"),
        S("tcn_hf_grad_accumulation", "tcn", "no zero_grad(set_to_none=True) before capture, checkpoint-<k>/ "
          "as Hugging Face's Trainer saves them", bug="grad_accumulation", causes=("grad_accumulation",),
          style="hf"),
        # ---------------- convnext (depthwise convolutions, LayerNorm channels last, layer scale from 1e-6,
        # stochastic depth; a family added after optimizerStep; scored before any change)
        S("convnext_resume_fp32_ok", "convnext", "resume at 600, AdamW, torch.save dict"),
        S("convnext_resume_bf16_ok", "convnext", "resume, pure bf16, safetensors per kind", prec="bf16", style="st"),
        S("convnext_resume_autocast_ok", "convnext", "resume, autocast, np.savez per step", prec="autocast",
          style="npz"),
        S("convnext_droppath_every2_ok", "convnext", "resume, stochastic depth 0.1 (graph-safe RNG), the "
          "checkpoint recipe every 2 steps", dropout=0.1, style="tutorial", n=8, every=2),
        # (make_graphed_callables on this model fails on torch 2.11: "GraphedBackward returned an incorrect
        # number of gradients (expected 26, got 25)"; no callables run)
        S("convnext_hf_ok", "convnext", "resume, AdamW, checkpoint-<k>/ as Hugging Face's Trainer saves them",
          style="hf"),
        S("convnext_stale_input", "convnext", "static_x = x instead of copy_, safetensors", bug="stale_input",
          causes=("stale_input",), style="st"),
        S("convnext_input_lag", "convnext", "the batch copied into the static input after the replay, np.savez",
          bug="input_lag", causes=("input_lag",), style="npz"),
        S("convnext_grad_accumulation", "convnext", "no zero_grad(set_to_none=True) before capture",
          bug="grad_accumulation", causes=("grad_accumulation",)),
        S("convnext_lr_drop_captured", "convnext", "a float lr dropped x0.1 at step 605 after capture",
          bug="captured_lr", causes=("captured_scalar",), sched=("drop", 605, 0.1), onset=605),
        S("convnext_numpy_dropout", "convnext", "a dropout mask drawn with numpy into a pinned buffer inside the "
          "captured step", bug="cpu_noise", causes=("frozen_rng",), noise="cpu"),
        S("convnext_kept_by_reference", "convnext", "dumps written after the loop, grads and loss kept by "
          "reference", bug="output_aliasing", causes=("output_aliasing",)),
        S("convnext_partial_batch", "convnext", "an epoch's last batch of 6 rows at step 605, np.savez",
          bug="dynamic_shape", causes=("dynamic_shape",), partial_at=605, style="npz", onset=605),
        S("convnext_hf_stale_input", "convnext", "static_x = x instead of copy_, checkpoint-<k>/ as Hugging "
          "Face's Trainer saves them", bug="stale_input", causes=("stale_input",), style="hf"),
        S("convnext_tutorial_input_lag", "convnext", "the batch copied in after the replay, the checkpoint recipe",
          bug="input_lag", causes=("input_lag",), style="tutorial"),
        S("convnext_tutorial_grad_accumulation", "convnext", "no zero_grad(set_to_none=True) before capture, the "
          "checkpoint recipe", bug="grad_accumulation", causes=("grad_accumulation",), style="tutorial"),
        # ---------------- convnext with EMA weights, a tensor schedule, sparse dumps, the autocast cache and
        # the helper's tree (added after the family scored 15/15; scored before any change)
        S("convnext_ema_every2_ok", "convnext", "resume, AdamW, EMA captured, model_<k>.safetensors with ema.*, "
          "every 2 steps", ema=True, style="st_ckpt", n=10, every=2),
        S("convnext_ema_decay_captured", "convnext", "EMA decay switched 0.99 -> 0.999 at 605 after capture: only "
          "EMA weights depart", bug="ema_decay", causes=("captured_scalar",), ema=True, ema_switch=605, onset=605),
        S("convnext_ema_switch_recapture_ok", "convnext", "EMA decay 0.99 -> 0.999 at 605, graph captured again, "
          "np.savez", ema=True, ema_switch=605, recapture=True, style="npz"),
        S("convnext_cosine_tensor_ok", "convnext", "autocast, a cosine lr in a device tensor, clipping, the "
          "graphdiff_dump helper's tree", prec="autocast", lr_tensor=True, sched=("cosine",), clip=True,
          style="helper"),
        S("convnext_autocast_cache", "convnext", "one autocast region (cache on) around warm-up and capture, "
          "safetensors", bug="autocast_cache", causes=("autocast_cache",), prec="autocast", style="st"),
        S("convnext_bf16_lr_drop_captured", "convnext", "a float lr dropped x0.1 at step 605 after capture, pure "
          "bf16, safetensors", bug="captured_lr", causes=("captured_scalar",), sched=("drop", 605, 0.1),
          prec="bf16", style="st", onset=605),
        S("convnext_every4_lr_drop_captured", "convnext", "a float lr dropped x0.1 at step 609 after capture, "
          "dumps every 4 steps, np.savez", bug="captured_lr", causes=("captured_scalar",), sched=("drop", 609, 0.1),
          n=16, every=4, style="npz", onset=611),
        S("convnext_every2_stale_input", "convnext", "static_x = x instead of copy_, the checkpoint recipe every "
          "2 steps", bug="stale_input", causes=("stale_input",), style="tutorial", n=8, every=2),
        S("convnext_every4_input_lag", "convnext", "the batch copied in after the replay, dumps every 4 steps",
          bug="input_lag", causes=("input_lag",), n=16, every=4),
        S("convnext_ema_numpy_dropout", "convnext", "a numpy dropout mask inside the captured step, EMA, "
          "safetensors", bug="cpu_noise", causes=("frozen_rng",), noise="cpu", ema=True, style="st"),
        # ---------------- other optimizers' update rules, from step 0 (RMSprop, NAdam, RAdam, Adamax, SGD with
        # Nesterov momentum; added after convnext; scored before any change)
        S("tab_recipe_rmsprop_ok", "tab", "the recipe from step 0, RMSprop (capturable), the checkpoint recipe",
          start="scratch", optim="rmsprop", style="tutorial", n=6),
        S("gru_recipe_nadam_ok", "gru", "the recipe from step 0, NAdam (capturable), torch.save dict", start="scratch",
          optim="nadam", n=6),
        S("convnext_recipe_radam_ok", "convnext", "the recipe from step 0, RAdam (capturable), np.savez",
          start="scratch", optim="radam", style="npz", n=6),
        S("gnn_recipe_adamax_ok", "gnn", "the recipe from step 0, Adamax (capturable), the checkpoint recipe",
          start="scratch", optim="adamax", style="tutorial", n=6),
        S("vit_recipe_nesterov_ok", "vit", "the recipe from step 0, SGD with Nesterov momentum, safetensors",
          start="scratch", optim="nesterov", style="st", n=6),
        S("tab_recipe_rmsprop_lr_drop_captured", "tab", "RMSprop, a float lr dropped x0.1 at step 5 after capture",
          bug="captured_lr", causes=("captured_scalar",), start="scratch", optim="rmsprop", sched=("drop", 5, 0.1),
          n=6, onset=5),
        S("gru_recipe_nadam_grad_accumulation", "gru", "NAdam, no zero_grad(set_to_none=True) before capture, np.savez",
          bug="grad_accumulation", causes=("grad_accumulation",), start="scratch", optim="nadam", style="npz", n=6),
        S("convnext_recipe_radam_stale_input", "convnext", "RAdam, static_x = x instead of copy_, safetensors",
          bug="stale_input", causes=("stale_input",), start="scratch", optim="radam", style="st", n=6),
        S("gnn_recipe_adamax_input_lag", "gnn", "Adamax, the batch copied in after the replay, the checkpoint "
          "recipe", bug="input_lag", causes=("input_lag",), start="scratch", optim="adamax", style="tutorial", n=6),
        S("vit_recipe_nesterov_lr_drop_captured", "vit", "SGD Nesterov, a float lr dropped x0.1 at step 5 after "
          "capture, torch.save dict", bug="captured_lr", causes=("captured_scalar",), start="scratch",
          optim="nesterov", sched=("drop", 5, 0.1), n=6, onset=5),
        S("tab_recipe_rmsprop_tutorial_grad_accumulation", "tab", "RMSprop, no zero_grad(set_to_none=True) before "
          "capture, the checkpoint recipe", bug="grad_accumulation", causes=("grad_accumulation",), start="scratch",
          optim="rmsprop", style="tutorial", n=6),
        S("convnext_recipe_nadam_tutorial_stale_input", "convnext", "NAdam, static_x = x instead of copy_, the "
          "checkpoint recipe", bug="stale_input", causes=("stale_input",), start="scratch", optim="nadam",
          style="tutorial", n=6),
        # ---------------- correct runs on PyTorch's default kernels (nondeterministic, cuDNN benchmark) and
        # fused attention, as most loops run (added after the optimizers; scored before any change)
        S("resnet_bn_nondet_ok", "resnet_bn", "resume, SGD momentum, cuDNN benchmark and nondeterministic "
          "kernels, torch.save dict", nondet=True),
        S("unet_gn_nondet_ema_ok", "unet_gn", "resume, AdamW, EMA, nondeterministic kernels, np.savez", nondet=True,
          ema=True, style="npz"),
        S("convnext_nondet_bf16_ok", "convnext", "resume, pure bf16, nondeterministic kernels, safetensors",
          nondet=True, prec="bf16", style="st"),
        S("tcn_nondet_tutorial_ok", "tcn", "resume, SGD momentum, nondeterministic kernels, the checkpoint recipe",
          nondet=True, style="tutorial"),
        S("vit_sdpa_bf16_ok", "vit", "resume, pure bf16, fused attention (SDPA), nondeterministic kernels",
          nondet=True, sdpa=True, prec="bf16"),
        S("vit_sdpa_autocast_dropout_ok", "vit", "resume, autocast, fused attention with dropout 0.1, "
          "nondeterministic kernels, np.savez", nondet=True, sdpa=True, prec="autocast", dropout=0.1, style="npz"),
        S("moe_sdpa_hf_ok", "moe", "resume, fused attention, nondeterministic kernels, Hugging Face's layout",
          nondet=True, sdpa=True, style="hf"),
        S("tab_nondet_ok", "tab", "resume, AdamW, nondeterministic kernels (embedding backward), safetensors",
          nondet=True, style="st"),
        S("lstm_nondet_autocast_ok", "lstm", "resume, autocast, nondeterministic kernels, np.savez", nondet=True,
          prec="autocast", style="npz"),
        S("gnn_nondet_every2_ok", "gnn", "resume, Adam, nondeterministic kernels, every 2 steps", nondet=True,
          n=8, every=2),
        S("vit_sdpa_recipe_ok", "vit", "the recipe from step 0, Adam, fused attention, nondeterministic kernels",
          start="scratch", optim="adam", nondet=True, sdpa=True, n=6),
        S("moe_sdpa_recipe_bf16_ok", "moe", "the recipe from step 0, pure bf16, fused attention, nondeterministic "
          "kernels, the checkpoint recipe", start="scratch", nondet=True, sdpa=True, prec="bf16", style="tutorial",
          n=6),
        # ---------------- OneCycleLR's momentum cycled from Python after capture (Adam's β1, SGD's momentum:
        # floats the captured step keeps), the lr in a tensor (added after the default kernels; scored before
        # any change)
        S("vit_onecycle_betas_captured", "vit", "AdamW's β1 cycled 0.85 -> 0.95 from step 1004 as OneCycleLR does, "
          "a float after capture; the lr in a tensor", bug="cycled_momentum", causes=("captured_scalar",),
          lr_tensor=True, sched=("onecycle", 1004, 20), onset=1005),
        S("gru_onecycle_betas_captured", "gru", "Adam's β1 cycled from step 504 after capture, np.savez",
          bug="cycled_momentum", causes=("captured_scalar",), lr_tensor=True, sched=("onecycle", 504, 20),
          style="npz", onset=505),
        S("resnet_bn_onecycle_momentum_captured", "resnet_bn", "SGD's momentum cycled 0.85 -> 0.95 from step 1204 "
          "after capture, safetensors", bug="cycled_momentum", causes=("captured_scalar",),
          sched=("onecycle", 1204, 20), style="st", onset=1205),
        S("convnext_onecycle_tutorial_betas_captured", "convnext", "AdamW's β1 cycled from step 604 after capture, "
          "the checkpoint recipe", bug="cycled_momentum", causes=("captured_scalar",), lr_tensor=True,
          sched=("onecycle", 604, 20), style="tutorial", onset=605),
        S("tab_onecycle_hf_betas_captured", "tab", "AdamW's β1 cycled from step 504 after capture, Hugging Face's "
          "layout", bug="cycled_momentum", causes=("captured_scalar",), lr_tensor=True,
          sched=("onecycle", 504, 20), style="hf", onset=505),
        S("moe_onecycle_every2_betas_captured", "moe", "Adam's β1 cycled from step 1004 after capture, dumps every "
          "2 steps", bug="cycled_momentum", causes=("captured_scalar",), lr_tensor=True,
          sched=("onecycle", 1004, 20), n=10, every=2, onset=1005),
        S("vit_onecycle_recapture_ok", "vit", "AdamW's β1 cycled from step 1004, the graph captured again when it "
          "changes; the lr in a tensor", lr_tensor=True, sched=("onecycle", 1004, 20), recapture=True),
        S("gru_onecycle_recapture_ok", "gru", "Adam's β1 cycled from step 504, the graph captured again, np.savez",
          lr_tensor=True, sched=("onecycle", 504, 20), recapture=True, style="npz"),
        # ---------------- the momentum rule fitted to saved moments, a learning rate held in a tensor beside
        # a saved optimizer, RAdam's rectification (added after momentRule, Tensor.Hyper and rectShift; scored
        # before any change)
        S("tcn_onecycle_tutorial_momentum_captured", "tcn", "SGD's momentum cycled from step 604 after capture, "
          "the checkpoint recipe", bug="cycled_momentum", causes=("captured_scalar",), sched=("onecycle", 604, 20),
          style="tutorial", onset=605),
        S("gru_onecycle_hf_betas_captured", "gru", "Adam's β1 cycled from step 504 after capture, Hugging Face's "
          "layout", bug="cycled_momentum", causes=("captured_scalar",), lr_tensor=True, sched=("onecycle", 504, 20),
          style="hf", onset=505),
        S("vae_onecycle_tutorial_betas_captured", "vae", "Adam's β1 cycled from step 404 after capture, the "
          "checkpoint recipe", bug="cycled_momentum", causes=("captured_scalar",), lr_tensor=True,
          sched=("onecycle", 404, 20), style="tutorial", onset=405),
        S("lstm_onecycle_recapture_tutorial_ok", "lstm", "AdamW's β1 cycled from step 404, the graph captured again "
          "when it changes, the checkpoint recipe", lr_tensor=True, sched=("onecycle", 404, 20), recapture=True,
          style="tutorial"),
        S("vit_hf_cosine_tensor_ok", "vit", "AdamW, a cosine lr in a device tensor, Hugging Face's layout",
          lr_tensor=True, sched=("cosine",), style="hf"),
        S("moe_tutorial_cosine_tensor_ok", "moe", "Adam, a cosine lr in a device tensor, the checkpoint recipe",
          lr_tensor=True, sched=("cosine",), style="tutorial"),
        S("gnn_recipe_radam_ok", "gnn", "the recipe from step 0, RAdam (capturable), np.savez", start="scratch",
          optim="radam", style="npz", n=8),
        S("tab_recipe_radam_lr_drop_captured", "tab", "RAdam, a float lr dropped x0.1 at step 7 after capture",
          bug="captured_lr", causes=("captured_scalar",), start="scratch", optim="radam", sched=("drop", 7, 0.1),
          n=8, onset=7),
        S("vae_recipe_radam_tutorial_ok", "vae", "the recipe from step 0, RAdam (capturable), the checkpoint recipe",
          start="scratch", optim="radam", style="tutorial", n=8),
        S("convnext_recipe_radam_every2_ok", "convnext", "the recipe from step 0, RAdam (capturable), safetensors "
          "every 2 steps", start="scratch", optim="radam", style="st", n=12, every=2),
        # ---------------- vit and convnext served (added after the RAdam follow-up; scored before any change)
        S("infer_vit_fp32_ok", "infer", "the vit classifier served in eval mode, torch.save per batch", of="vit",
          style="out_pt", n=6),
        S("infer_convnext_bf16_ok", "infer", "the convnext classifier served in pure bf16, safetensors per batch",
          of="convnext", prec="bf16", style="out_st", n=6),
        S("infer_vit_autocast_sdpa_ok", "infer", "vit served under autocast, fused attention, np.savez per batch",
          of="vit", prec="autocast", sdpa=True, style="out_npz", n=6),
        S("infer_convnext_temp_captured", "infer", "convnext served, temperature 1.0 -> 0.6 at batch 3 as a Python "
          "float after capture", of="convnext", bug="aux_weight", causes=("captured_scalar",), aux_switch=3,
          style="out_pt", n=6, onset=3),
        S("infer_vit_fp16_temp_captured", "infer", "vit served in pure fp16, temperature 1.0 -> 0.6 at batch 3 as a "
          "Python float after capture, np.savez per batch", of="vit", prec="fp16", bug="aux_weight",
          causes=("captured_scalar",), aux_switch=3, style="out_npz", n=6, onset=3),
        S("infer_vit_stale_input", "infer", "vit served, static input rebound to each batch instead of copied",
          of="vit", bug="stale_input", causes=("stale_input",), style="out_st", n=6),
        S("infer_convnext_input_lag", "infer", "convnext served, the batch copied into the static input after the "
          "replay", of="convnext", bug="input_lag", causes=("input_lag",), style="out_npz", n=6),
        S("infer_convnext_kept_by_reference", "infer", "convnext served, each batch's static outputs kept by "
          "reference", of="convnext", bug="output_aliasing", causes=("output_aliasing",), style="out_pt", n=6),
        S("infer_vit_partial_batch", "infer", "vit served, a last batch of 6 at batch 4 copied into the static "
          "input[:6]", of="vit", bug="dynamic_shape", causes=("dynamic_shape",), partial_at=4, style="out_pt", n=5,
          onset=4),
        # ---------------- an EMA decay warmed up from Python, (1 + k)/(10 + k), as timm's EMA does (added after
        # the served vit and convnext; scored before any change)
        S("unet_gn_recipe_ema_warmup_captured", "unet_gn", "the recipe from step 0, the EMA decay warmed up as "
          "(1 + k)/(10 + k), a Python float frozen at capture", bug="ema_decay", causes=("captured_scalar",),
          start="scratch", ema=True, ema_warmup=True, n=6, onset=4),
        S("vit_recipe_ema_warmup_captured", "vit", "the recipe from step 0, Adam, EMA decay warmed up, frozen at "
          "capture, safetensors", bug="ema_decay", causes=("captured_scalar",), start="scratch", optim="adam",
          ema=True, ema_warmup=True, style="st", n=6, onset=4),
        S("tab_recipe_ema_warmup_captured", "tab", "the recipe from step 0, EMA decay warmed up, frozen at capture, "
          "torch.save dict", bug="ema_decay", causes=("captured_scalar",), start="scratch", ema=True,
          ema_warmup=True, n=6, onset=4),
        S("unet_gn_recipe_ema_warmup_recapture_ok", "unet_gn", "the recipe from step 0, EMA decay warmed up, the "
          "graph captured again when it changes", start="scratch", ema=True, ema_warmup=True, recapture=True, n=6),
        # ---------------- the momentum rule again: captured again (correct), Nesterov, NAdam, sparse dumps, RAdam
        # in Hugging Face's layout (added after the EMA warm-up; scored before any change)
        S("gru_onecycle_recapture_hf_ok", "gru", "Adam's β1 cycled from step 504, the graph captured again when it "
          "changes, Hugging Face's layout", lr_tensor=True, sched=("onecycle", 504, 20), recapture=True, style="hf"),
        S("resnet_bn_onecycle_recapture_tutorial_ok", "resnet_bn", "SGD's momentum cycled from step 1204, the graph "
          "captured again, the checkpoint recipe", sched=("onecycle", 1204, 20), recapture=True, style="tutorial"),
        S("vit_recipe_nesterov_onecycle_tutorial_captured", "vit", "from step 0, SGD with Nesterov momentum "
          "cycled from step 4 after capture, the checkpoint recipe", bug="cycled_momentum",
          causes=("captured_scalar",), start="scratch", optim="nesterov", sched=("onecycle", 4, 20),
          style="tutorial", n=6, onset=5),
        S("convnext_recipe_nadam_onecycle_hf_captured", "convnext", "from step 0, NAdam's β1 cycled from step 4 "
          "after capture, Hugging Face's layout", bug="cycled_momentum", causes=("captured_scalar",),
          start="scratch", optim="nadam", lr_tensor=True, sched=("onecycle", 4, 20), style="hf", n=6, onset=5),
        S("moe_onecycle_tutorial_every2_betas_captured", "moe", "Adam's β1 cycled from step 1004 after capture, "
          "the checkpoint recipe every 2 steps", bug="cycled_momentum", causes=("captured_scalar",), lr_tensor=True,
          sched=("onecycle", 1004, 20), style="tutorial", n=10, every=2, onset=1005),
        S("tab_recipe_radam_hf_ok", "tab", "from step 0, RAdam (capturable), Hugging Face's layout",
          start="scratch", optim="radam", style="hf", n=8),
    ]


def curve_scenarios() -> list[Sc]:
    """Loss-curve pairs (--curves): 1200 steps after the recipe's warm-up,
    the loss of every step kept (label kind "curve"). Long correct runs of
    the new families, and slow breaks under drift: a slow cosine on a
    Python float lr that the graph froze at capture (fp32: the lr differs
    by 1e-6 relative at the first replayed step and more each step), and
    a learning-rate drop at a late step hidden under bfloat16 drift. Each
    also writes baseline/: the eager run again from weights one unit in the
    last place apart, which shows how far rounding alone carries the loss
    in that run (graphdiff curve --baseline)."""
    S = Sc
    c = dict(style="curve", n=1200, curve=True)
    return [
        S("vit_curve_autocast_cosine_ok", "vit", "resume at 1000, autocast, AdamW with a slow cosine lr held in a "
          "device tensor, 1200 steps", prec="autocast", lr_tensor=True, sched=("cosine_from", 1003, 1200), **c),
        S("vit_curve_cosine_frozen", "vit", "the same slow cosine on a Python float lr, fp32: the graph keeps "
          "the lr of capture", bug="captured_lr", causes=("captured_scalar",), sched=("cosine_from", 1003, 1200),
          onset=1004, **c),
        S("resnet_bn_curve_tf32_adam_ok", "resnet_bn", "the recipe from step 0, TF32, Adam, 1200 steps",
          start="scratch", optim="adam", prec="tf32", **c),
        S("unet_gn_curve_bf16_ok", "unet_gn", "resume at 800, pure bf16, AdamW, EMA, 1200 steps", prec="bf16",
          ema=True, **c),
        S("unet_gn_curve_bf16_lr_drop", "unet_gn", "pure bf16, a float lr halved at step 1403 after capture, "
          "hidden under bf16 drift", bug="captured_lr", causes=("captured_scalar",), prec="bf16", ema=True,
          sched=("drop", 1403, 0.5), onset=1403, **c),
        S("moe_curve_fp32_fused_ok", "moe", "the recipe from step 0, top-2, Adam fused (capturable), 1200 steps",
          start="scratch", fused=True, **c),
        S("moe_curve_bf16_lr_drop", "moe", "pure bf16, a float lr halved at step 1603 after capture, hidden "
          "under bf16 drift", bug="captured_lr", causes=("captured_scalar",), prec="bf16",
          sched=("drop", 1603, 0.5), onset=1603, **c),
    ]


# --------------------------------------------------------------------------
# environment


class Env:
    def __init__(self, cpu: bool, out: Path):
        self.cpu = cpu
        self.dev = torch.device("cpu" if cpu else "cuda")
        self.out = out
        self.lines: list[str] = []
        self.warnings: list[str] = []
        self.ckpt: dict[str, Path] = {}

    def say(self, msg):
        print(msg, flush=True)
        self.lines.append(msg)

    def warn(self, msg):
        self.say("WARNING: " + msg)
        self.warnings.append(msg)


def deterministic():
    torch.use_deterministic_algorithms(True)
    try:
        import torch.utils.deterministic as tud  # torch >= 2.1
        tud.fill_uninitialized_memory = False
    except ImportError:
        pass
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True


def set_tf32(env, on):
    if not env.cpu:
        torch.backends.cuda.matmul.allow_tf32 = on
        torch.backends.cudnn.allow_tf32 = on


def model_dtype(sc):
    return {"bf16": torch.bfloat16, "fp16": torch.float16}.get(sc.prec, torch.float32)


def amp(sc, env, on=True):
    if sc.prec == "autocast" and on:
        return torch.autocast(env.dev.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def bns(model):
    return [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]


def clip(params):
    try:
        nn.utils.clip_grad_norm_(params, 1.0, foreach=True)
    except TypeError:  # torch < 2.0
        nn.utils.clip_grad_norm_(params, 1.0)


class EMA:
    """fp32 shadow weights: e = d * e + (1 - d) * p, d a Python float."""

    def __init__(self, model, state=None):
        self.shadow = OrderedDict((n, p.detach().float().clone()) for n, p in model.named_parameters())
        if state is not None:
            for n, t in state.items():
                self.shadow[n].copy_(t)

    @torch.no_grad()
    def update(self, model, decay):
        for n, p in model.named_parameters():
            self.shadow[n].mul_(decay).add_(p.detach().float(), alpha=1.0 - decay)


class Hyper:
    """The Python values the loop keeps and the step reads: schedules and
    host-side draws, set for each global step by at(k)."""

    FROZEN = ("step", "lr", "ema_decay", "momentum", "aux_w", "aux_until", "lam", "t", "pos")

    def __init__(self, sc, base_lr):
        self.sc, self.base_lr = sc, base_lr
        self.np = np.random.RandomState(SEED_HOST)
        self.py = random.Random(SEED_HOST)
        self.step = None
        self.lr = base_lr
        self.ema_decay = 0.99
        self.momentum = 0.1
        self.aux_w = 0.01
        self.aux_until = sc.aux_until
        self.lam = None
        self.t = None
        self.pos = None
        self.beta1 = None  # onecycle: Adam's β1 or SGD's momentum, cycled against the lr

    def at(self, k):
        sc = self.sc
        self.step = k
        f = 1.0
        if sc.sched and sc.sched[0] == "cosine":
            f = 0.5 * (1 + math.cos(math.pi * (k % 40) / 40))
        elif sc.sched and sc.sched[0] == "cosine_from":  # one slow half cosine over sched[2] steps from sched[1]
            f = 0.5 * (1 + math.cos(math.pi * min(max(k - sc.sched[1], 0), sc.sched[2]) / sc.sched[2]))
        elif sc.sched and sc.sched[0] == "drop" and k >= sc.sched[1]:
            f = sc.sched[2]
        elif sc.sched and sc.sched[0] == "onecycle":  # OneCycleLR's annealing: lr down, momentum 0.85 -> 0.95
            c = 0.5 * (1 + math.cos(math.pi * min(max(k - sc.sched[1], 0), sc.sched[2]) / sc.sched[2]))
            f = c if sc.lr_tensor else 1.0
            self.beta1 = 0.95 - 0.1 * c
        self.lr = self.base_lr * f
        self.ema_decay = 0.999 if sc.ema_switch is not None and k >= sc.ema_switch else 0.99
        if sc.ema_warmup:
            self.ema_decay = min(0.999, (1 + k) / (10 + k))
        self.momentum = 0.01 if sc.momentum_switch is not None and k >= sc.momentum_switch else 0.1
        self.aux_w = 0.002 if sc.aux_switch is not None and k >= sc.aux_switch else 0.01
        if sc.aux_decay is not None and sc.aux_switch is not None and k >= sc.aux_switch:
            self.aux_w = 0.01 * sc.aux_decay ** (k - sc.aux_switch + 1)
        if sc.mixup:
            self.lam = float(self.np.beta(0.4, 0.4))
        if sc.timestep == "python":
            self.t = self.py.randrange(T_DIFF)

    def apply(self, model, opt, aux):
        """What the loop does with the values: lr into the optimizer, momentum
        into BatchNorm, the aux weight into its tensor."""
        if opt is not None:
            for g in opt.param_groups:
                if torch.is_tensor(g["lr"]):
                    g["lr"].fill_(self.lr)
                else:
                    g["lr"] = self.lr
                if self.beta1 is not None and "betas" in g:  # floats: a captured step keeps its own
                    g["betas"] = (self.beta1, g["betas"][1])
                elif self.beta1 is not None and "momentum" in g:
                    g["momentum"] = self.beta1
        for m in bns(model):
            m.momentum = self.momentum
        if aux is not None and aux.aux_w is not None:
            aux.aux_w.fill_(self.aux_w)


class Aux:
    """Device-side helpers of a run: the diffusion schedule, the pinned noise
    buffer, the aux weight tensor."""

    def __init__(self, sc, env, dtype):
        self.aux_w = torch.zeros((), device=env.dev) if sc.aux == "tensor" else None
        betas = torch.linspace(1e-4, 0.05, T_DIFF, dtype=torch.float64)
        self.acp = torch.cumprod(1 - betas, 0).float().to(env.dev)
        self.host = None
        self.draw_inside = True
        if sc.noise == "cpu":
            self.pinned = not env.cpu
            shape = SERVED[sc.of][1] if sc.family == "infer" else FAMILIES[sc.family].get("host_shape", (BATCH, 1, 8, 8))
            self.host = torch.zeros(*shape, pin_memory=self.pinned)
            self.rs = np.random.RandomState(SEED_HOST + 1)

    def host_values(self, device):
        """The host draw as the step reads it: drawn here when the step
        draws (inside the captured step, once at capture: the bug), copied
        to the device without blocking."""
        if self.draw_inside:
            self.draw()
        return self.host.to(device, non_blocking=True)

    def draw(self):
        if self.pinned and not torch.cuda.is_current_stream_capturing():
            torch.cuda.current_stream().synchronize()  # the last copy out of the buffer is done
        self.host.copy_(torch.from_numpy(self.rs.standard_normal(tuple(self.host.shape)).astype(np.float32)))


def captured_key(sc, hp, model, opt):
    """The Python values a captured step has baked in."""
    lrs = () if opt is None or sc.lr_tensor else tuple(float(g["lr"]) for g in opt.param_groups)
    branch = None if hp.aux_until is None else hp.step < hp.aux_until
    betas = () if opt is None else tuple((g.get("betas"), g.get("momentum")) for g in opt.param_groups)
    return (lrs, tuple(m.momentum for m in bns(model)), hp.ema_decay, hp.aux_w, hp.lam, hp.t, hp.pos, branch, betas)


# --------------------------------------------------------------------------
# graphs: the real one, and --cpu's simulation


class CudaGraphStep:
    def __init__(self, env, fn, args, hp, model, opt, ema, extra, train, freeze_lr):
        self.g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.g):
            self.static = fn(*args)

    def replay(self):
        self.g.replay()
        return self.static


def _tensors_of(obj):
    if torch.is_tensor(obj):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _tensors_of(o)]
    return []


class SimGraphStep:
    """--cpu: capture records fn, its static arguments and the Python values
    it reads (hp's, BatchNorm momenta, float learning rates), runs it once for
    the shapes of its outputs and undoes what that run changed (a real capture
    runs nothing); replay runs fn eagerly with the recorded values and copies
    its results into the static outputs and gradients."""

    def __init__(self, env, fn, args, hp, model, opt, ema, extra, train, freeze_lr):
        self.fn, self.args, self.hp, self.model, self.opt, self.train = fn, tuple(args), hp, model, opt, train
        self.freeze_lr = freeze_lr
        self.values = self._read()
        self.params = list(model.parameters()) if train else []
        self.grads_none = all(p.grad is None for p in self.params)
        keep = [t for t in model.state_dict().values()] + list(model.buffers()) + list(extra)  # non-persistent too
        if opt is not None:
            keep += [v for s in opt.state.values() for v in s.values() if torch.is_tensor(v)]
        if ema is not None:
            keep += list(ema.shadow.values())
        saved = [(t, t.detach().clone()) for t in keep]
        grads = [(p, p.grad, None if p.grad is None else p.grad.detach().clone()) for p in self.params]
        rng = torch.get_rng_state()
        out = fn(*self.args)
        with torch.no_grad():
            for t, c in saved:
                t.copy_(c)
        torch.set_rng_state(rng)
        self.static = self._clone(out)
        self.sgrads = {}
        for p, g, c in grads:  # after a capture, .grad points at the graph's gradients
            if g is None:
                self.sgrads[p] = torch.zeros_like(p)
            else:
                g.copy_(c)
                self.sgrads[p] = g
            p.grad = self.sgrads[p]

    def _read(self):
        v = {"hp": {k: getattr(self.hp, k) for k in Hyper.FROZEN},
             "mom": [(m, m.momentum) for m in bns(self.model)]}
        if self.freeze_lr and self.opt is not None:
            v["lr"] = [(g, g["lr"]) for g in self.opt.param_groups]
        if self.opt is not None:  # Python floats the optimizer's step reads, baked into a real graph
            v["groups"] = [(g, {n: g[n] for n in ("betas", "momentum") if n in g}) for g in self.opt.param_groups]
        return v

    def _set(self, v):
        for k, x in v["hp"].items():
            setattr(self.hp, k, x)
        for m, x in v["mom"]:
            m.momentum = x
        for g, x in v.get("lr", []):
            g["lr"] = x
        for g, x in v.get("groups", []):
            g.update(x)

    @staticmethod
    def _clone(out):
        if torch.is_tensor(out):
            return out.detach().clone()
        return type(out)(SimGraphStep._clone(o) for o in out)

    @staticmethod
    def _copy(dst, src):
        if torch.is_tensor(dst):
            dst.copy_(src.detach())
        else:
            for d, s in zip(dst, src):
                SimGraphStep._copy(d, s)

    def replay(self):
        now = self._read()
        self._set(self.values)
        if self.grads_none:
            for p in self.params:
                p.grad = None
        try:
            out = self.fn(*self.args)
        finally:
            self._set(now)
        for p in self.params:
            sg = self.sgrads[p]
            if p.grad is not sg:
                sg.copy_(p.grad)
                p.grad = sg
        self._copy(self.static, out)
        return self.static


def capture(env, *a, **kw):
    return (SimGraphStep if env.cpu else CudaGraphStep)(env, *a, **kw)


def side_stream(env):
    """The recipe's warm-up stream."""
    if env.cpu:
        return contextlib.nullcontext(), lambda: None
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    return torch.cuda.stream(s), lambda: torch.cuda.current_stream().wait_stream(s)


# --------------------------------------------------------------------------
# what a run dumps: collect() builds what the user's save call is handed


def collect(sc, model, loss, ema, opt=None, k=None):
    grads = OrderedDict((n, p.grad) for n, p in model.named_parameters() if p.grad is not None)
    ema_sd = ema.shadow if ema is not None else {}
    s = sc.style
    if s == "tutorial":  # PyTorch's "saving a general checkpoint" recipe, one file per step
        return {"epoch": k, "model_state_dict": model.state_dict(), "optimizer_state_dict": opt.state_dict(),
                "loss": loss}
    if s == "hf":  # Hugging Face Trainer's checkpoint-<k>/: the model and the optimizer in files apart
        return {"pytorch_model.bin": model.state_dict(), "optimizer.pt": opt.state_dict()}
    if s == "pt":
        d = {"model": model.state_dict(), "grads": grads, "loss": loss}
        if ema is not None:
            d["ema"] = ema_sd
        return d
    if s in ("pt_ckpt", "st_ckpt"):
        sd = model.state_dict()
        for n, e in ema_sd.items():
            sd["ema." + n] = e
        return sd
    if s == "npz":
        src = model.state_dict() if sc.npz_params == "state_dict" else OrderedDict(model.named_parameters())
        d = {"loss": loss}
        d.update(("grads/" + n, g) for n, g in grads.items())
        d.update(("params/" + n, p) for n, p in src.items())
        d.update(("ema/" + n, e) for n, e in ema_sd.items())
        return d
    if s == "st":
        d = {"loss": {"loss": loss}, "grads": grads, "params": model.state_dict()}
        if ema is not None:
            d["ema"] = ema_sd
        return d
    if s == "helper":
        d = {"loss": loss, "params": OrderedDict(model.named_parameters()), "grads": grads,
             "buffers": OrderedDict((n, b) for n, b in model.named_buffers() if b.is_floating_point())}
        if ema is not None:
            d["extra"] = OrderedDict(("ema." + n, e) for n, e in ema_sd.items())
        return d
    if s == "npytree":
        d = {"loss": loss, "grads": grads, "params": OrderedDict(model.named_parameters()),
             "buffers": OrderedDict(model.named_buffers())}
        if ema is not None:
            d["ema"] = ema_sd
        return d
    raise ValueError(s)


def materialize(obj, keep=()):
    """Host copies, as torch.save / np.savez / save_file make them; the
    top-level keys in keep stay references (a deferred dump)."""
    if torch.is_tensor(obj):
        return obj.detach().to("cpu", copy=True)
    if isinstance(obj, dict):
        new = OrderedDict() if isinstance(obj, OrderedDict) else {}
        for k, v in obj.items():
            new[k] = v if k in keep else materialize(v)
        if hasattr(obj, "_metadata"):
            new._metadata = copy.deepcopy(obj._metadata)
        return new
    if isinstance(obj, (list, tuple)):  # an optimizer's param_groups
        return type(obj)(materialize(v) for v in obj)
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(type(obj))


class Sink:
    """The dumps of one run: (step, what was saved), host copies; with refs,
    the named top-level entries are kept as references and copied at the end
    (the output_aliasing bug and its eager run)."""

    def __init__(self, refs=()):
        self.refs = tuple(refs)
        self.steps: list[tuple[int, dict]] = []

    def add(self, k, nested):
        self.steps.append((k, materialize(nested, keep=self.refs)))

    def finish(self):
        self.steps = [(k, materialize(d)) for k, d in self.steps]
        return self.steps


def flatten(obj, prefix=""):
    if torch.is_tensor(obj):
        return {prefix: obj}
    if not isinstance(obj, dict):
        return {}  # an epoch number, an optimizer's param_groups: no tensors
    out = {}
    for k, v in obj.items():
        out.update(flatten(v, f"{prefix}/{k}" if prefix else str(k)))
    return out


# --------------------------------------------------------------------------
# training runs


def make_opt(sc, env, model, graphed):
    fam = FAMILIES[sc.family]
    kind, lr = sc.optim or fam["optim"], fam["lr"]
    assert sc.optim is None or sc.start == "scratch", "a resumed run keeps the checkpoint's optimizer"
    kw = {}
    if kind == "sgd":
        cls, kw = torch.optim.SGD, dict(momentum=0.9, weight_decay=5e-4)
    elif kind == "nesterov":
        cls, kw = torch.optim.SGD, dict(momentum=0.9, nesterov=True, weight_decay=5e-4)
    elif kind == "adam":
        cls = torch.optim.Adam
    elif kind == "rmsprop":
        cls, kw, lr = torch.optim.RMSprop, dict(alpha=0.99), lr / 2
    elif kind == "nadam":
        cls, kw = torch.optim.NAdam, dict(weight_decay=1e-4)
    elif kind == "radam":
        cls = torch.optim.RAdam
    elif kind == "adamax":
        cls = torch.optim.Adamax
    else:
        cls, kw = torch.optim.AdamW, dict(weight_decay=0.05)
    if not env.cpu:
        if graphed and kind not in ("sgd", "nesterov"):
            kw.update(dict(fused=True, capturable=True) if sc.fused else dict(foreach=True, capturable=True))
            if sc.lr_tensor:
                lr = torch.tensor(lr, device=env.dev)
        else:
            kw["foreach"] = True
    if sc.wd_split:  # as transformer loops write it: no decay on biases and norms
        assert kind == "adamw" and sc.start == "scratch", "two groups need AdamW and a fresh optimizer"
        wd = kw.pop("weight_decay")
        return cls([{"params": [p for p in model.parameters() if p.ndim >= 2], "weight_decay": wd},
                    {"params": [p for p in model.parameters() if p.ndim < 2], "weight_decay": 0.0}], lr=lr, **kw)
    return cls(model.parameters(), lr=lr, **kw)


def load_ckpt(env, family):
    try:
        return torch.load(env.ckpt[family], map_location="cpu", weights_only=False)
    except TypeError:
        return torch.load(env.ckpt[family], map_location="cpu")


def build(sc, env, graphed, nudge=False):
    """The model, optimizer and EMA a run starts from: fresh (scratch) or the
    family's checkpoint loaded (resume); returns them and the first step.
    With nudge every parameter moves one unit in the last place of the
    dtype the model computes in (float32's or bfloat16's, toward +inf; by
    2^-10 of itself under TF32, whose products keep 10 mantissa bits, and
    by 2^-7 under bf16 autocast, whose products read bfloat16 casts of 7
    bits): the baseline rounding is measured by."""
    fam = FAMILIES[sc.family]
    torch.manual_seed(SEED_INIT)
    model = fam["make"](sc)
    for m in model.modules():
        if isinstance(m, SelfAttention):
            m.sdpa = sc.sdpa
    step0, ck = 0, None
    if sc.start == "resume":
        ck = load_ckpt(env, sc.family)
        model.load_state_dict(ck["model"])
        step0 = ck["step"]
    model.to(device=env.dev, dtype=model_dtype(sc))
    model.train()
    if nudge:  # one unit in the last place of the dtype the model computes in
        with torch.no_grad():
            for p in model.parameters():
                if sc.prec == "tf32":  # TF32 keeps 10 mantissa bits of float32's 23: a float32 ULP would vanish
                    p.mul_(1 + 2.0 ** -10)
                elif sc.prec == "autocast":  # the products read bfloat16 casts (7 bits): so would a float32 ULP
                    p.mul_(1 + 2.0 ** -7)
                else:
                    p.copy_(torch.nextafter(p, torch.full_like(p, math.inf)))
    opt = make_opt(sc, env, model, graphed)
    if ck is not None:
        state = copy.deepcopy(ck["optimizer"])
        if graphed and not env.cpu:
            for g in state["param_groups"]:  # the checkpoint's groups replace the optimizer's on load
                if "capturable" in g:
                    g["capturable"] = True
                if sc.fused:
                    g["fused"], g["foreach"] = True, None
        opt.load_state_dict(state)
        if graphed and sc.lr_tensor and not env.cpu:
            for g in opt.param_groups:
                g["lr"] = torch.tensor(float(g["lr"]), device=env.dev)
    ema = None
    if sc.ema:
        ema = EMA(model, ck.get("ema") if ck is not None else None)
    torch.manual_seed(SEED_RUN)
    return model, opt, ema, step0


def to_dev(env, sc, batch):
    return tuple(t.to(env.dev) if not t.is_floating_point() else t.to(env.dev, model_dtype(sc)) for t in batch)


def make_step(sc, env, net, model, opt, ema, hp, aux, inner_amp):
    """The user's training step: forward (autocast where the scenario has
    it), backward, clipping, optimizer step, EMA; returns the loss."""
    loss_of = FAMILIES[sc.family]["loss"]
    params = list(model.parameters())

    def train_step(*inp):
        with amp(sc, env, inner_amp):
            loss = loss_of(sc, net, inp, hp, aux)
        loss.backward()
        if sc.clip:
            clip(params)
        opt.step()
        if ema is not None:
            ema.update(model, hp.ema_decay)
        return loss.detach()

    return train_step


def pretrain(env, family, path):
    """The checkpoint resumed runs load: the family trained eagerly from
    scratch (fp32, constant lr) for its number of steps."""
    t0 = time.perf_counter()
    sc = Sc(f"{family}_pretrain", family, "pretraining", start="scratch", ema=FAMILIES[family].get("ema", False))
    set_tf32(env, False)
    model, opt, ema, _ = build(sc, env, graphed=False)
    hp = Hyper(sc, FAMILIES[family]["lr"])
    aux = Aux(sc, env, model_dtype(sc))
    fn = make_step(sc, env, model, model, opt, ema, hp, aux, True)
    n = FAMILIES[family]["ckpt"]
    batch = FAMILIES[family]["batch"]
    for k in range(n):
        hp.at(k)
        hp.apply(model, opt, aux)
        opt.zero_grad(set_to_none=True)
        loss = fn(*to_dev(env, sc, batch(k)))
    ck = {"model": model.state_dict(), "optimizer": opt.state_dict(), "step": n}
    if ema is not None:
        ck["ema"] = ema.shadow
    torch.save(ck, path)
    env.say(f"checkpoint {family}: {n} eager steps, last loss {float(loss):.4f} ({time.perf_counter() - t0:.1f} s)")


def run_train(sc, env, mode, bugged, nudge=False):
    """One training run: mode "eager", "graph" (the whole step captured, the
    recipe) or "callables" (make_graphed_callables on the model); bugged puts
    the scenario's bug into the graphed run. Returns its dumps."""
    bug = sc.bug if bugged and mode != "eager" else None
    set_tf32(env, sc.prec == "tf32")
    model, opt, ema, step0 = build(sc, env, graphed=(mode == "graph"), nudge=nudge)
    hp = Hyper(sc, FAMILIES[sc.family]["lr"])
    aux = Aux(sc, env, model_dtype(sc))
    model.uninit = bug == "uninit_combine"
    model.rebind = bug == "state_rebound"
    batch = FAMILIES[sc.family]["batch"]
    warm = WARMUP if sc.capture == "graph" else 0
    steps = list(range(step0, step0 + warm + sc.n))
    first = step0 if sc.dump_warmup or warm == 0 else step0 + warm
    dumped = {k for k in steps if k >= first and (k - first) % sc.every == 0}
    refs = ()
    if sc.bug == "output_aliasing" and (mode == "eager" or bugged):
        refs = ("grads", "loss")  # user code: model cloned, grads and loss kept as they are
        if sc.style == "tutorial":
            refs = ("loss", "optimizer_state_dict")  # the loss and the optimizer's state, not cloned
    sink = Sink(refs)

    def data(k):
        if sc.start == "scratch" and k < step0 + warm:
            k = step0  # the recipe warms up on the static input, batch 0
        n = 6 if sc.partial_at == k else BATCH
        return to_dev(env, sc, batch(k, n))

    def dump(k, loss):
        if k in dumped:
            sink.add(k, {"loss": loss} if sc.curve else collect(sc, model, loss, ema, opt, k))

    if mode in ("eager", "callables"):  # the loop eager; under "callables" the model graphed alone
        net = model
        if mode == "callables" and not env.cpu:
            sample = data(step0)
            if sc.family == "unet_gn":  # the UNet's inputs: a noised image and its time
                sample = (sample[0].clone(), torch.zeros(BATCH, device=env.dev))
            elif sc.family == "vit" or sc.family == "moe":
                sample = (sample[0].clone(),)
            net = torch.cuda.make_graphed_callables(model, sample)
        fn = make_step(sc, env, net, model, opt, ema, hp, aux, True)
        for k in steps:
            hp.at(k)
            hp.apply(model, opt, aux)
            opt.zero_grad(set_to_none=True)
            dump(k, fn(*data(k)))
        return sink.finish()

    # the whole step captured: PyTorch's recipe
    outer = sc.bug == "autocast_cache"
    region = torch.autocast(env.dev.type, dtype=torch.bfloat16, cache_enabled=(bug == "autocast_cache")) \
        if outer else contextlib.nullcontext()
    fn = make_step(sc, env, model, model, opt, ema, hp, aux, inner_amp=not outer)
    aux.draw_inside = not (sc.noise == "cpu" and bug is None)  # the fix draws before each replay
    params = list(model.parameters())
    static = tuple(t.clone() for t in data(steps[0]))
    extra = [aux.host] if aux.host is not None else []
    recapture = sc.recapture or (sc.twin_recaptures and bug is None)

    def take_graph():
        if bug != "grad_accumulation":
            opt.zero_grad(set_to_none=True)  # backward allocates .grad from the graph's pool
        g = capture(env, fn, static, hp, model, opt, ema, extra, train=True, freeze_lr=not sc.lr_tensor)
        return g, captured_key(sc, hp, model, opt)

    with region:
        ctx, join = side_stream(env)
        with ctx:
            for k in steps[:warm]:
                hp.at(k)
                hp.apply(model, opt, aux)
                for s, x in zip(static, data(k)):
                    s.copy_(x)
                if not aux.draw_inside:
                    aux.draw()
                opt.zero_grad(set_to_none=True)
                dump(k, fn(*static))
        join()
        first_replay = steps[warm]
        hp.at(first_replay)
        hp.apply(model, opt, aux)
        graph, key = take_graph()
        graph_grads = [p.grad for p in params]
        inputs = static
        for k in steps[warm:]:
            if k != first_replay:
                hp.at(k)
                hp.apply(model, opt, aux)
            if recapture and captured_key(sc, hp, model, opt) != key:
                graph, key = take_graph()
                graph_grads = [p.grad for p in params]
            x = data(k)
            if not aux.draw_inside:
                aux.draw()
            if x[0].shape[0] != static[0].shape[0]:
                if bug == "dynamic_shape":
                    for s, v in zip(static, x):  # BUG: the tail rows keep the previous batch
                        s[: v.shape[0]].copy_(v)
                    loss = graph.replay()
                    dump(k, loss)
                    continue
                # the fix: a batch of another shape runs eagerly, the graph's grads put back after
                for p in params:
                    p.grad = None
                loss = make_step(sc, env, model, model, opt, ema, hp, aux, True)(*x)
                dump(k, loss)
                for p, g in zip(params, graph_grads):
                    p.grad = g
                continue
            if bug == "stale_input":
                inputs = x  # BUG: static_x = x rebinds the name; the graph reads the old tensor
            elif bug != "input_lag":
                for s, v in zip(static, x):
                    s.copy_(v)
            loss = graph.replay()
            if bug == "input_lag":
                for s, v in zip(static, x):  # BUG: the copy comes after the replay
                    s.copy_(v)
            dump(k, loss)
        del inputs
    return sink.finish()


# --------------------------------------------------------------------------
# decoding runs


def run_decode(sc, env, mode, bugged):
    """Greedy decoding with a static KV cache: the prompt is prefilled eagerly
    (token by token), then each decode step runs eagerly or as a replay of
    one captured decode step. Dumps per decode position: logits, tokens.
    With sc.gens > 1 the same batch decodes again from other prompts, the
    cache emptied between generations and the graph of the first one
    replayed; generation g's position t is dumped as step TMAX·g + t
    (every sc.every-th position from the first decoded one)."""
    bug = sc.bug if bugged and mode != "eager" else None
    set_tf32(env, sc.prec == "tf32")
    torch.manual_seed(SEED_INIT)
    model = KVDecoder()
    model.load_state_dict(load_ckpt(env, "kv_decoder")["model"])
    model.to(device=env.dev, dtype=model_dtype(sc)).eval()
    b, p = decode_prompts(0).shape
    kc = torch.zeros(b, KVDecoder.TMAX, KVDecoder.D, dtype=model_dtype(sc), device=env.dev)
    vc = torch.zeros_like(kc)
    hp = Hyper(sc, 0.0)
    refs = ("logits", "tokens") if sc.bug == "output_aliasing" and (mode == "eager" or bugged) else ()
    sink = Sink(refs)

    def one(tok, pos, uninit=False):  # reads the cache the names kc, vc hold now
        with amp(sc, env):
            return model.step(tok, pos if sc.pos_kind == "tensor" else hp.pos, kc, vc, uninit)

    steps = range(p, p + sc.n)
    graph = None
    with torch.no_grad():
        pos = torch.zeros((), dtype=torch.long, device=env.dev)
        for gen in range(sc.gens):
            if gen > 0:
                if bug == "cache_rebuilt":  # BUG: a new cache; the graph keeps the first one
                    kc, vc = torch.zeros_like(kc), torch.zeros_like(vc)
                else:
                    kc.zero_()
                    vc.zero_()
            prompts = decode_prompts(gen).to(env.dev)
            for t in range(p):  # prefill
                hp.pos = t
                pos.fill_(t)
                _, nxt = one(prompts[:, t].contiguous(), pos)
            tok = nxt.clone()
            at = KVDecoder.TMAX * gen
            if mode == "eager":
                for t in steps:
                    hp.pos = t
                    pos.fill_(t)
                    logits, nxt = one(tok, pos)
                    if (t - p) % sc.every == 0:
                        sink.add(at + t, {"logits": logits, "tokens": nxt})
                    tok = nxt
                continue
            uninit = bug == "uninit_pad"

            def fn(tk, ps):
                return one(tk, ps, uninit)

            if graph is None:
                static_tok, static_pos = tok.clone(), torch.full((), p, dtype=torch.long, device=env.dev)
                hp.pos = p
                ctx, join = side_stream(env)
                with ctx:
                    for _ in range(WARMUP):  # rewrites the cache at position p with the same values
                        fn(static_tok, static_pos)
                join()
                recapture = sc.twin_recaptures and bug is None

                def take_graph():
                    return capture(env, fn, (static_tok, static_pos), hp, model, None, None, [kc, vc], train=False,
                                   freeze_lr=False), captured_key(sc, hp, model, None)

                graph, key = take_graph()
            for t in steps:
                hp.pos = t
                if t > p or gen > 0:
                    if bug == "stale_input":
                        static_tok = tok  # BUG: rebinds the name; the graph reads the first token forever
                    else:
                        static_tok.copy_(tok)
                    static_pos.fill_(t)
                if recapture and captured_key(sc, hp, model, None) != key:
                    graph, key = take_graph()
                logits, nxt = graph.replay()
                if (t - p) % sc.every == 0:
                    sink.add(at + t, {"logits": logits, "tokens": nxt})
                tok = nxt.clone()
    return sink.finish()


class Served(nn.Module):
    """A trained classifier served for inference: its logits, shifted by a
    per-class prior adjustment (a device tensor the user updates), and its
    probabilities at a temperature (softmax over classes, or a sigmoid for
    one logit); mask, when given, multiplies the first floating-point
    input (input dropout drawn by the user, for Monte Carlo dropout)."""

    def __init__(self, net, classes, dev):
        super().__init__()
        self.net = net
        self.prior = torch.zeros(classes, device=dev)  # classes: a shape

    def forward(self, inputs, temp, mask=None):
        if mask is not None:
            i = next(i for i, t in enumerate(inputs) if t.is_floating_point())
            inputs = tuple(t * mask if j == i else t for j, t in enumerate(inputs))
        logits = self.net(*inputs).float() + self.prior
        probs = torch.sigmoid(logits / temp) if logits.dim() == 1 else torch.softmax(logits / temp, -1)
        return logits, probs


# the served models' classes (() for one logit) and the shape of their
# first floating-point input
SERVED = {"resnet_bn": (4, (BATCH, 3, 8, 8)), "tab": ((), (BATCH, Tabular.NUM)), "vit": (4, (BATCH, 3, 8, 8)),
          "convnext": (4, (BATCH, 3, 8, 8))}


def infer_prior(classes):
    """The prior adjustment the user sets at sc.prior_at: a fixed shift per
    class (zero before)."""
    shape = classes if isinstance(classes, tuple) else (classes,)
    return torch.linspace(-0.6, 0.4, max(1, math.prod(shape))).reshape(shape)


def run_infer(sc, env, mode, bugged):
    """Batched inference of sc.of's trained classifier in eval mode: each
    batch copied into static inputs and one captured forward replayed, or
    run eagerly. Dumps per batch, numbered from 0: logits and probabilities
    (nothing else: no loss, gradients or parameters). The temperature is
    0.5 + 50 times the aux weight (1.0, then 0.6 from sc.aux_switch): a
    Python float, or a device tensor where sc.aux says so; the prior
    adjustment is set at sc.prior_at. Numpy's input-dropout draws (sc.noise
    "cpu") are made inside the step, once per batch eagerly and, the bug,
    once at capture in the graph; the fix draws before each replay."""
    bug = sc.bug if bugged and mode != "eager" else None
    set_tf32(env, sc.prec == "tf32")
    torch.manual_seed(SEED_INIT)
    net = FAMILIES[sc.of]["make"](sc)
    net.load_state_dict(load_ckpt(env, sc.of)["model"])
    net.to(device=env.dev, dtype=model_dtype(sc)).eval()
    classes, host_shape = SERVED[sc.of]
    model = Served(net, classes if classes == () else (classes,), env.dev)
    hp = Hyper(sc, 0.0)
    aux = Aux(sc, env, model_dtype(sc))
    temp_t = torch.ones((), device=env.dev)
    batch_of = FAMILIES[sc.of]["batch"]
    refs = ("logits", "probs") if sc.bug == "output_aliasing" and (mode == "eager" or bugged) else ()
    sink = Sink(refs)

    def data(k):
        n = 6 if sc.partial_at == k else BATCH
        return to_dev(env, sc, batch_of(1_000_000 + k, n)[:-1])  # the labels are not served

    def settle(k):
        """What the loop sets before batch k: the temperature, the prior."""
        hp.at(k)
        temp_t.fill_(0.5 + 50 * hp.aux_w)
        if sc.prior_at == k:
            new = infer_prior(classes).to(env.dev)
            if bug == "prior_rebound":
                model.prior = new  # BUG: rebinds the attribute; the graph reads the old tensor
            else:
                model.prior.copy_(new)

    def fn(*inputs):
        with amp(sc, env):
            mask = host_dropout(sc, aux, inputs[0].device, inputs[0].dtype)  # input dropout
            temp = temp_t if sc.aux == "tensor" else 0.5 + 50 * hp.aux_w
            return model(inputs, temp, mask)

    steps = range(sc.n)
    aux.draw_inside = mode == "eager" or not (sc.noise == "cpu" and bug is None)
    with torch.no_grad():
        if mode == "eager":
            for k in steps:
                settle(k)
                logits, probs = fn(*data(k))
                sink.add(k, {"logits": logits, "probs": probs})
            return sink.finish()
        settle(0)
        static = [t.clone() for t in data(0)]
        ctx, join = side_stream(env)
        with ctx:
            for _ in range(WARMUP):
                fn(*static)
        join()
        recapture = sc.twin_recaptures and bug is None

        def take_graph():
            extra = [model.prior, temp_t] + ([aux.host] if aux.host is not None else [])
            return capture(env, fn, static, hp, model, None, None, extra, train=False,
                           freeze_lr=False), captured_key(sc, hp, model, None)

        graph, key = take_graph()
        for k in steps:
            settle(k)
            batch = data(k)
            if bug == "stale_input":
                static = list(batch)  # BUG: rebinds the names; the graph reads the capture batch
            elif bug != "input_lag":
                for dst, src in zip(static, batch):
                    dst[:src.shape[0]].copy_(src)
            if recapture and captured_key(sc, hp, model, None) != key:
                graph, key = take_graph()
            if not aux.draw_inside:
                aux.draw()
            logits, probs = graph.replay()
            if bug == "input_lag":  # BUG: the batch copied in after the replay
                for dst, src in zip(static, batch):
                    dst[:src.shape[0]].copy_(src)
            if sc.partial_at == k and bug is None:  # the fix: only the rows of the batch
                logits, probs = logits[:batch[0].shape[0]], probs[:batch[0].shape[0]]
            sink.add(k, {"logits": logits, "probs": probs})
    return sink.finish()


# --------------------------------------------------------------------------
# writing


def to_np(t):
    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        t = t.float()  # numpy has no bfloat16
    return t.contiguous().numpy()


def save_st(env, tensors, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.contiguous() for k, v in tensors.items()}
    if st_torch is not None:
        st_torch.save_file(tensors, str(path))
    elif env.cpu and graphdiff_dump is not None:
        graphdiff_dump._write_safetensors(str(path), tensors)  # the safetensors format, without the package
    else:
        raise RuntimeError("safetensors is not installed")


def _module_view(params, grads, buffers):
    """An nn.Module holding a step's saved tensors under their names, for the
    graphdiff_dump helper (which takes a model)."""
    root = nn.Module()

    def owner(name):
        m = root
        parts = name.split(".")
        for part in parts[:-1]:
            if not hasattr(m, part) or not isinstance(getattr(m, part), nn.Module):
                m.add_module(part, nn.Module())
            m = getattr(m, part)
        return m, parts[-1]

    for n, t in params.items():
        m, leaf = owner(n)
        prm = nn.Parameter(t.clone(), requires_grad=t.is_floating_point())
        if n in grads:
            prm.grad = grads[n]
        m.register_parameter(leaf, prm)
    for n, t in buffers.items():
        m, leaf = owner(n)
        m.register_buffer(leaf, t)
    return root


def write_run(sc, env, run_dir, steps, graphed):
    run_dir.mkdir(parents=True)
    s = sc.style
    dumper = None
    if s == "helper":
        if graphdiff_dump is None:
            raise RuntimeError("graphdiff_dump (python/) not importable")
        dumper = graphdiff_dump.Dumper(str(run_dir), graphed=graphed,
                                       compute_dtype="bfloat16" if sc.prec == "autocast" else None,
                                       labels={"harness": "userloops", "scenario": sc.name})
    for k, d in steps:
        if s == "pt":
            torch.save(d, run_dir / f"step_{k}.pt")
        elif s == "tutorial":
            torch.save(d, run_dir / f"checkpoint_{k}.pt")
        elif s == "hf":
            (run_dir / f"checkpoint-{k}").mkdir()
            for name, obj in d.items():
                torch.save(obj, run_dir / f"checkpoint-{k}" / name)
        elif s == "pt_ckpt":
            torch.save(d, run_dir / f"ckpt_{k}.pt")
        elif s == "st_ckpt":
            save_st(env, d, run_dir / f"model_{k}.safetensors")
        elif s == "npz":
            arrays = {n: (np.float64(t.item()) if n == "loss" else to_np(t)) for n, t in d.items()}
            np.savez(run_dir / f"step_{k}.npz", **arrays)
        elif s == "st":
            for kind, ts in d.items():
                save_st(env, ts, run_dir / sc.stepdir.format(k) / f"{kind}.safetensors")
        elif s == "helper":
            dumper.step(k, loss=d["loss"], model=_module_view(d["params"], d["grads"], d["buffers"]),
                        extra=d.get("extra"))
        elif s == "npytree":
            sd = run_dir / f"step_{k:06d}"
            for name, t in flatten(d).items():
                f = sd / (name + ".npy")
                f.parent.mkdir(parents=True, exist_ok=True)
                np.save(f, to_np(t), allow_pickle=False)
        elif s == "curve":
            pass  # written whole below
        elif s == "out_pt":
            torch.save(d, run_dir / f"batch_{k}.pt")
        elif s == "out_npz":
            np.savez(run_dir / f"preds_{k:04d}.npz", **{n: to_np(t) for n, t in d.items()})
        elif s == "out_st":
            save_st(env, d, run_dir / f"step_{k}" / "outputs.safetensors")
        elif s == "decode_pt":
            torch.save(d, run_dir / f"pos_{k}.pt")
        elif s == "decode_npz":
            np.savez(run_dir / f"gen_{k:03d}.npz", logits=to_np(d["logits"]), tokens=to_np(d["tokens"]))
        elif s == "decode_st":
            save_st(env, {"logits": d["logits"], "next_token": d["tokens"]}, run_dir / f"step_{k}" /
                    "outputs.safetensors")
        else:
            raise ValueError(s)
    if s == "curve":  # Python's csv with repr: the float32 (or bfloat16) losses exactly
        with open(run_dir / "loss.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["step", "loss"])
            for k, d in steps:
                w.writerow([k, repr(float(d["loss"].float().item()))])


# --------------------------------------------------------------------------
# observing


def _bits(t):
    if t.is_floating_point():
        return t.contiguous().view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])
    return t


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(_bits(a), _bits(b))


def pair_numbers(a, b):
    """How far b is from a: max |a-b|, ‖a-b‖/‖a‖, the fraction of elements
    whose bits differ; words where there is no number."""
    if a.shape != b.shape:
        return {"shape_a": list(a.shape), "shape_b": list(b.shape)}
    if a.dtype != b.dtype:
        return {"dtype_a": str(a.dtype), "dtype_b": str(b.dtype)}
    x, y = a.double(), b.double()
    fin = torch.isfinite(x) & torch.isfinite(y)
    d = (x - y)[fin]
    na = x[fin].norm().item()
    r = {"max_abs": d.abs().max().item() if d.numel() else 0.0,
         "rel_l2": (d.norm().item() / na) if na > 0 else (0.0 if d.norm().item() == 0 else "inf"),
         "bits_differ": (_bits(a) != _bits(b)).float().mean().item() if a.numel() else 0.0}
    nonfin = int((~torch.isfinite(y)).sum()) - int((~torch.isfinite(x)).sum())
    if nonfin:
        r["extra_nonfinite_in_b"] = nonfin
    return r


def step_diffs(da, db):
    fa, fb = flatten(da), flatten(db)
    rows = []
    for n in sorted(set(fa) | set(fb)):
        if n not in fa or n not in fb:
            rows.append({"tensor": n, "only_in": "a" if n in fa else "b"})
        elif not same(fa[n], fb[n]):
            rows.append({"tensor": n, **pair_numbers(fa[n], fb[n])})
    return rows


def first_diff(ra, rb):
    for (ka, da), (kb, db) in zip(ra, rb):
        assert ka == kb, (ka, kb)
        rows = step_diffs(da, db)
        if rows:
            return ka, rows
    return None, []


# a curve's break is hard (label "hard": shown, not scored) when its
# relative difference at its first step is at most HARD_FACTOR times the
# largest of the HARD_WINDOW steps before it (testdata/gen/curves.py's rule)
HARD_FACTOR, HARD_WINDOW = 2.0, 50


def curve_hard(ra, rb, k):
    """Whether the first divergent step k of a curve pair does not stand out
    of the eager-vs-graph drift before it: where it starts cannot be read
    from the losses."""
    rel = []
    for (s, da), (_, db) in zip(ra, rb):
        a, b = float(da["loss"].float().item()), float(db["loss"].float().item())
        rel.append((s, abs(b - a) / abs(a) if a else (0.0 if a == b else math.inf)))
    at = [i for i, (s, _) in enumerate(rel) if s == k][0]
    before = [r for _, r in rel[max(0, at - HARD_WINDOW):at]]
    return rel[at][1] <= HARD_FACTOR * max(before, default=0.0)


# a compare scenario's bug is hard (label "hard": shown, not scored) when
# at its first divergent step no dumped tensor differs from eager by more
# than NOISE_FACTOR times the difference of the eager run started from
# weights one unit in the last place apart (build(nudge=True)): the bug then
# moves the run no farther than rounding alone does, and no rule read from
# these dumps can tell it from rounding. NOISE_FACTOR is graphdiff's own
# premise (judge.NoiseFactor): a correct graphed run and a nudged eager run
# are samples of the same rounding noise, within a factor 3 of each other.
NOISE_FACTOR = 3.0


def observable(ra, rb, rn, k):
    """At step k, each tensor's relative L2 difference of the graphed run rb
    and of the nudged eager run rn from the eager run ra; returns the
    tensor that stands out most (its ratio D/(NOISE_FACTOR·N), inf where
    the nudged run repeats eager bit for bit there) and whether any does."""
    da = dict(ra)[k]
    d = {r["tensor"]: r for r in step_diffs(da, dict(rb)[k])}
    n = {r["tensor"]: r for r in step_diffs(da, dict(rn)[k])}
    best = None
    for name, r in d.items():
        dv = r.get("rel_l2")
        if not isinstance(dv, float):  # a shape, dtype or name difference: stands out
            return {"step": k, "tensor": name, "graph": r, "ratio": "inf", "stands_out": True}
        nv = n.get(name, {}).get("rel_l2", 0.0)
        if not isinstance(nv, float):
            continue
        ratio = dv / (NOISE_FACTOR * nv) if nv > 0 else (math.inf if dv > 0 else 0.0)
        if best is None or ratio > best["ratio"]:
            best = {"step": k, "tensor": name, "graph_rel_l2": dv, "nudged_rel_l2": nv, "ratio": ratio}
    best["stands_out"] = best["ratio"] > 1
    if math.isinf(best["ratio"]):
        best["ratio"] = "inf"
    return best


def per_step(ra, rb):
    """Per dumped step: bitwise equal?, and per kind (first path component)
    the largest relative L2 difference of b from a."""
    out = []
    for (k, da), (_, db) in zip(ra, rb):
        rows = step_diffs(da, db)
        worst = {}
        for r in rows:
            kind = r["tensor"].split("/")[0] if "/" in r["tensor"] else r["tensor"].split(".")[0]
            v = r.get("rel_l2", "n/a")
            if isinstance(v, float):
                worst[kind] = max(worst.get(kind, 0.0), v) if isinstance(worst.get(kind, 0.0), float) else v
            else:
                worst[kind] = v
        out.append({"step": k, "bitwise_equal": not rows, "tensors_differing": len(rows),
                    "max_rel_l2_by_kind": worst})
    return out


STYLE_WORDS = {
    "pt": "torch.save({'model': state_dict, 'grads', 'loss'}) per step as step_<k>.pt",
    "pt_ckpt": "params-only torch.save(state_dict) per step as ckpt_<k>.pt",
    "st_ckpt": "params-only safetensors state_dict per step as model_<k>.safetensors",
    "npz": "np.savez per step as step_<k>.npz ('grads/<n>', 'params/<n>', 'loss' from loss.item())",
    "st": "one safetensors file per kind in a per-step directory",
    "helper": "the graphdiff_dump helper's tree (step_%06d/, .npy, manifest.json)",
    "npytree": "a hand-written .npy tree step_%06d/{loss,grads/,params/,buffers/,ema/}",
    "curve": "the loss of every step only, loss.csv (step,loss; repr of the float)",
    "decode_pt": "torch.save({'logits', 'tokens'}) per decode position as pos_<t>.pt",
    "decode_npz": "np.savez(logits, tokens) per decode position as gen_<t>.npz",
    "decode_st": "step_<t>/outputs.safetensors (logits, next_token) per decode position",
    "tutorial": "torch.save({'epoch', 'model_state_dict', 'optimizer_state_dict', 'loss'}) per step as "
                "checkpoint_<k>.pt (PyTorch's general-checkpoint recipe: no gradients)",
    "hf": "checkpoint-<k>/pytorch_model.bin (the model's state_dict) and optimizer.pt (the optimizer's), as "
          "Hugging Face's Trainer saves them: no gradients, the two in files apart",
    "out_pt": "torch.save({'logits', 'probs'}) per batch as batch_<k>.pt",
    "out_npz": "np.savez(logits, probs) per batch as preds_<kkkk>.npz",
    "out_st": "step_<k>/outputs.safetensors (logits, probs) per batch",
}


def describe(sc):
    fam = FAMILIES.get(sc.family)
    parts = [sc.family]
    if sc.family == "infer":
        parts.append(f"{sc.of}'s checkpoint ({FAMILIES[sc.of]['ckpt']} eager training steps) served in eval mode "
                     f"for {sc.n} batches numbered from 0; the forward captured once (torch.cuda.graph) on static "
                     f"inputs holding batch 0 after {WARMUP} warm-up calls on a side stream")
    elif sc.family == "kv_decoder":
        parts.append(f"greedy decoding of {sc.n} positions after a 6-token prompt prefilled eagerly; each decode "
                     f"step {'captured once' if sc.bug != 'captured_pos' else 'captured'} (torch.cuda.graph) after "
                     f"{WARMUP} warm-up calls on a side stream")
    else:
        if sc.start == "resume":
            parts.append(f"resumed from a torch.save checkpoint after {fam['ckpt']} eager steps")
        else:
            parts.append("from scratch, the recipe's warm-up on the static batch numbered steps 0-2")
        kind = sc.optim or fam["optim"]
        opt = {"sgd": "SGD(momentum=0.9)", "adam": "Adam", "adamw": "AdamW(weight_decay=0.05)",
               "nesterov": "SGD(momentum=0.9, nesterov=True)", "rmsprop": "RMSprop(alpha=0.99, lr/2)",
               "nadam": "NAdam(weight_decay=1e-4)", "radam": "RAdam", "adamax": "Adamax"}[kind]
        if sc.capture == "graph":
            impl = "fused, capturable" if sc.fused else "foreach, capturable"
            if kind in ("sgd", "nesterov"):
                parts.append(f"{opt} (foreach in both runs, float lr)")
            else:
                parts.append(f"{opt} (eager foreach, graph {impl}{', tensor lr' if sc.lr_tensor else ''})")
            parts.append(f"whole step captured with torch.cuda.graph after {WARMUP} warm-up steps on a side stream "
                         f"(dumped: {'yes' if sc.dump_warmup else 'no'})")
        else:
            parts.append(f"{opt} eager (foreach) in both runs; the model graphed with "
                         f"torch.cuda.make_graphed_callables")
    parts.append({"fp32": "fp32 (TF32 off)", "tf32": "TF32 on in both", "bf16": "pure bf16 parameters",
                  "fp16": "pure fp16 parameters (half(), served only)", "autocast": "bf16 autocast"}[sc.prec])
    parts.append(STYLE_WORDS[sc.style] + (f" ({sc.stepdir.replace('{:06d}', '%06d').replace('{}', '<k>')})"
                                          if sc.style == "st" else ""))
    if sc.every > 1:
        parts.append(f"every {sc.every} steps")
    if sc.sdpa:
        parts.append("attention through F.scaled_dot_product_attention")
    if sc.nondet:
        parts.append("PyTorch's default kernels in both runs (no deterministic algorithms, cuDNN benchmark on)")
    return "; ".join(parts)


def observe(env, sc, root):
    if not sc.nondet:
        return observed(env, sc, root)
    assert sc.bug is None, "a bug's label needs a twin that repeats itself bit for bit"
    torch.use_deterministic_algorithms(False)
    torch.backends.cudnn.deterministic = False
    torch.backends.cudnn.benchmark = True
    try:
        return observed(env, sc, root)
    finally:
        deterministic()


def observed(env, sc, root):
    t0 = time.perf_counter()
    runner = {"kv_decoder": run_decode, "infer": run_infer}.get(sc.family, run_train)
    mode = "graph" if sc.capture == "graph" else "callables"
    eager = runner(sc, env, "eager", False)
    graph = runner(sc, env, mode, True)
    nudged = None
    measured = {"scenario": sc.name, "eager_vs_graph": per_step(eager, graph)}
    label = {"harness": "userloops", "family": sc.family, "kind": "compare", "a": "eager", "b": "graph"}
    if sc.curve:
        label.update(kind="curve", family="curve_" + sc.family, a="eager/loss.csv", b="graph/loss.csv")
        label["args"] = ["--baseline", "baseline/loss.csv"]
        compute = {"bf16": "bf16", "autocast": "bf16", "tf32": "tf32"}.get(sc.prec)
        if compute:  # what a user who knows the model's precision passes (graphdiff curve --compute-dtype)
            label["args"] += ["--compute-dtype", compute]
    elif sc.prec == "autocast":
        label["compute_dtype"] = "bf16"
    if sc.baseline and not sc.curve:
        label["args"] = ["--baseline", "baseline"]
    what = describe(sc) + f". {sc.what}"
    if sc.bug is None:
        label.update(verdict="pass", causes=[], first_divergent_step=None)
        loss_rel = [r["max_rel_l2_by_kind"].get("loss") for r in measured["eager_vs_graph"]]
        note = (f"Correct by construction: the same program graphed. Eager vs graph: bit for bit equal at "
                f"{sum(r['bitwise_equal'] for r in measured['eager_vs_graph'])} of {len(eager)} dumped steps.")
        first = measured["eager_vs_graph"][0]
        big = [v for kind, v in first["max_rel_l2_by_kind"].items()
               if kind in ("loss", "logits", "tokens") and (not isinstance(v, float) or v > 0.05)]
        if big:
            env.warn(f"{sc.name}: correct run departs from eager at its first dumped step {first['step']}: "
                     f"{first['max_rel_l2_by_kind']}")
        measured["loss_rel_l2"] = loss_rel
    else:
        twin = runner(sc, env, mode, False)
        twin2 = runner(sc, env, mode, False)
        k, rows = first_diff(twin, twin2)
        if k is not None:
            env.warn(f"{sc.name}: the fixed twin does not repeat itself bit for bit (step {k}: "
                     f"{rows[0]}): skipped")
            return None
        k, rows = first_diff(twin, graph)
        if k is None:
            env.warn(f"{sc.name}: the bug never shows in the dumps (graph == fixed twin bit for bit): skipped")
            return None
        if sc.onset is not None and k != sc.onset:
            env.warn(f"{sc.name}: first divergent step {k}, where the bug's cause acts from {sc.onset}")
        rows.sort(key=lambda r: -r["rel_l2"] if isinstance(r.get("rel_l2"), float) else -math.inf)
        measured["graph_vs_twin"] = per_step(twin, graph)
        measured["first_divergence"] = {"step": k, "tensors_differing": len(rows), "tensors": rows[:12]}
        measured["twin_repeats_bitwise"] = True
        label.update(verdict="fail", causes=list(sc.causes), first_divergent_step=k)
        if sc.curve and curve_hard(eager, graph, k):
            label["hard"] = True
        if not sc.curve and runner is run_train:
            nudged = runner(sc, env, "eager", False, nudge=True)
            obs = measured["observable"] = observable(eager, graph, nudged, k)
            if not obs["stands_out"]:
                label["hard"] = True
        top = rows[0]
        how = ", ".join(f"{key} {val:.3g}" if isinstance(val, float) else f"{key} {val}"
                        for key, val in top.items() if key != "tensor")
        note = (f"Bug {sc.bug}. Observed: the fixed twin (the same graphed run with the bug fixed"
                f"{', the graph captured again when the value changes' if sc.twin_recaptures else ''}) repeats "
                f"itself bit for bit; the buggy graph run first differs from it at step {k}, in {len(rows)} "
                f"tensor(s), most in {top['tensor']} ({how}).")
        if label.get("hard") and not sc.curve:
            obs = measured["observable"]
            note += (f" Hard (shown, not scored): at step {k} no tensor differs from eager by more than "
                     f"{NOISE_FACTOR:g} times what the eager run from weights one unit in the last place apart "
                     f"differs (most: {obs['tensor']}, relative L2 {obs['graph_rel_l2']:.3g} against "
                     f"{obs['nudged_rel_l2']:.3g}): the bug moves the run no farther than rounding does.")
    label["note"] = f"{what}. {note}"
    if env.cpu:
        label["note"] = "[--cpu simulation: no CUDA graph, no capturable optimizer; not a fixture] " + label["note"]
    d = root / sc.family / sc.name
    if d.exists():
        shutil.rmtree(d)
    write_run(sc, env, d / "eager", eager, graphed=False)
    write_run(sc, env, d / "graph", graph, graphed=True)
    if sc.curve or sc.baseline:  # the eager run again from weights one ulp apart: how far rounding alone carries it
        if nudged is None:
            nudged = runner(sc, env, "eager", False, nudge=True)
        write_run(sc, env, d / "baseline", nudged, graphed=False)
    (d / "label.json").write_text(json.dumps(label, indent=1) + "\n")
    (d / "measured.json").write_text(json.dumps(measured, indent=1, allow_nan=False, default=str) + "\n")
    size = sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
    env.say(f"{sc.name}: {label['verdict']} first_divergent_step {label['first_divergent_step']} "
            f"(dumped {eager[0][0]}..{eager[-1][0]}, {size / 1e3:.0f} kB, {time.perf_counter() - t0:.1f} s)")
    return label


def write_readme(root, versions):
    made = f"Made by `{GENERATOR}` ({json.dumps(versions)})." if versions else ""
    old = root / "README.md"
    if not made and old.exists():
        made = next((l for l in old.read_text().splitlines() if l.startswith("Made by")), "")
    lines = ["# userloops", "", made, "",
             "Eager-vs-CUDA-graph runs written the way users write training loops and dumps "
             "(see the generator's docstring). Labels (`label.json`, `\"harness\": \"userloops\"`) "
             "are observed against a fixed twin; `measured.json` holds the numbers.", "",
             "| scenario | family | what | verdict | causes | first divergent step |",
             "|---|---|---|---|---|---|"]
    for lab in sorted(root.glob("*/*/label.json")):
        l = json.loads(lab.read_text())
        step = l.get("first_divergent_step")
        note = l.get("note", "").split("] ", 1)[-1]
        what = note.split(". ")[1] if ". " in note else ""
        verdict = l["verdict"] + (" (hard: shown, not scored)" if l.get("hard") else "")
        lines.append(f"| {lab.parent.name} | {l['family']} | {what} | {verdict} | "
                     f"{', '.join(l.get('causes') or [])} | {'' if step is None else step} |")
    old.write_text("\n".join(lines) + "\n")


def short_trace():
    import traceback
    frames = traceback.format_exc().strip().splitlines()
    return "\n".join("    " + l for l in frames[-7:-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(REPO / "testdata" / "userloops"))
    ap.add_argument("--only", default="", help="comma-separated scenario names")
    ap.add_argument("--cpu", action="store_true", help="a logic check without CUDA; not fixtures")
    ap.add_argument("--list", action="store_true", help="list the scenarios and exit")
    ap.add_argument("--curves", action="store_true", help="the loss-curve pairs (curve_scenarios) instead")
    args = ap.parse_args()
    all_sc = curve_scenarios() if args.curves else scenarios()
    names = [s.name for s in all_sc]
    assert len(set(names)) == len(names)
    if args.list:
        for s in all_sc:
            print(f"{s.family:11s} {s.name:34s} {'bug ' + s.bug if s.bug else 'ok':22s} {s.what}")
        return
    only = set(filter(None, args.only.split(",")))
    unknown = only - set(names)
    if unknown:
        sys.exit(f"unknown scenario(s): {', '.join(sorted(unknown))}")
    if not args.cpu and not torch.cuda.is_available():
        sys.exit("no CUDA device: use --cpu for a logic check")
    root = Path(args.out)
    root.mkdir(parents=True, exist_ok=True)
    env = Env(args.cpu, root)
    deterministic()
    t_start = time.perf_counter()
    todo = [s for s in all_sc if not only or s.name in only]
    versions = {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__,
                "safetensors": getattr(sys.modules.get("safetensors"), "__version__", None),
                "device": "cpu (--cpu simulation)" if env.cpu else torch.cuda.get_device_name()}
    env.say(f"userloops: {len(todo)} scenarios into {root}; {json.dumps(versions)}")
    if st_torch is None:
        env.warn("safetensors not installed: safetensors files are written by graphdiff_dump's own writer")
    labels = []
    with tempfile.TemporaryDirectory(prefix="userloops-ckpt-") as tmp:
        for fam in sorted({s.of if s.family == "infer" else s.family for s in todo
                           if s.start == "resume" or s.family in ("kv_decoder", "infer")}):
            try:
                pretrain(env, fam, Path(tmp) / f"{fam}.pt")
                env.ckpt[fam] = Path(tmp) / f"{fam}.pt"
            except Exception as e:  # noqa: BLE001 - reported; that family's resumed runs are skipped
                env.warn(f"checkpoint {fam}: {type(e).__name__}: {e}\n{short_trace()}")
        for sc in todo:
            if env.cpu and sc.family in CPU_FP32 and sc.prec in ("bf16", "autocast"):
                env.warn(f"{sc.name}: run in fp32 on the CPU ({CPU_FP32[sc.family]})")
                sc = replace(sc, prec="fp32")
            if env.cpu and sc.bug in REAL_GRAPH_ONLY:
                env.warn(f"{sc.name}: bug {sc.bug} needs a real CUDA graph: skipped on the CPU")
                continue
            if not env.cpu and time.perf_counter() - t_start > BUDGET_S:
                env.warn(f"{sc.name}: not started, past the {BUDGET_S} s budget")
                continue
            try:
                lab = observe(env, sc, root)
            except Exception as e:  # noqa: BLE001 - reported; the others still run
                env.warn(f"{sc.name}: {type(e).__name__}: {e}\n{short_trace()}")
                continue
            if lab is not None:
                labels.append(lab)
    write_readme(root, versions if labels else None)
    n_pass = sum(l["verdict"] == "pass" for l in labels)
    env.say(f"{len(labels)} scenarios written ({n_pass} pass, {len(labels) - n_pass} fail) in "
            f"{time.perf_counter() - t_start:.0f} s; {len(env.warnings)} warnings")
    for fam in sorted({s.family for s in todo}):
        fam_dir = root / fam
        if fam_dir.exists():
            size = sum(f.stat().st_size for f in fam_dir.rglob("*") if f.is_file())
            env.say(f"  {fam}: {size / 1e6:.2f} MB")
    for w in env.warnings:
        env.say("  " + w)
    (root / "userloops.log").write_text("\n".join(env.lines) + "\n")


if __name__ == "__main__":
    main()
