"""Fine-tuning a pretrained torchvision mobilenet_v2 in the form of PyTorch's transfer-learning tutorial, shrunk:
an ImageFolder per split under ``--data`` (train/ and val/, a folder per class; the tests write small PNG and JPEG
files there), RandomResizedCrop + flip for training and Resize + CenterCrop for validation, ToTensor and
ImageNet's Normalize; load the checkpoint's state_dict, freeze the features, replace the classifier for the
folder's classes and train it with Adam, then the validation loss and accuracy. (The "pretrained" checkpoint is a
fresh model saved by torch.save: no download.)"""
import os
import tempfile

import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms

from _common import options, report, start_from


def main():
    args = options(steps=3, batch_size=4, dropout=0.2, augment=1, shuffle=1, size=64, data="data/hymenoptera")
    torch.manual_seed(0)
    normalize = transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    evaluate = [transforms.Resize(args.size + args.size // 8), transforms.CenterCrop(args.size)]
    augment = [transforms.RandomResizedCrop(args.size), transforms.RandomHorizontalFlip()] if args.augment else evaluate
    data_transforms = {"train": transforms.Compose([*augment, transforms.ToTensor(), normalize]),
                       "val": transforms.Compose([*evaluate, transforms.ToTensor(), normalize])}
    image_datasets = {x: datasets.ImageFolder(os.path.join(args.data, x), data_transforms[x]) for x in ["train", "val"]}
    dataloaders = {x: DataLoader(image_datasets[x], batch_size=args.batch_size,
                                 shuffle=x == "train" and bool(args.shuffle)) for x in ["train", "val"]}
    class_names = image_datasets["train"].classes
    with tempfile.TemporaryDirectory() as tmp:
        checkpoint = os.path.join(tmp, "mobilenet_v2.pth")
        torch.save(models.mobilenet_v2(weights=None).state_dict(), checkpoint)
        model = models.mobilenet_v2(weights=None)
        model.load_state_dict(torch.load(checkpoint, map_location="cpu", weights_only=True))
    for p in model.features.parameters():
        p.requires_grad = False
    model.classifier = nn.Sequential(nn.Dropout(args.dropout), nn.Linear(model.last_channel, len(class_names)))
    start_from(args, model)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    losses = []
    model.train()
    for step, (inputs, labels) in enumerate(dataloaders["train"]):
        if step == args.steps:
            break
        optimizer.zero_grad()
        loss = criterion(model(inputs), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    val_loss, corrects = 0.0, 0
    with torch.no_grad():
        for inputs, labels in dataloaders["val"]:
            outputs = model(inputs)
            val_loss += criterion(outputs, labels).item() * inputs.size(0)
            corrects += torch.sum(outputs.argmax(1) == labels).item()
    val_loss /= len(image_datasets["val"])
    frozen = sum(not p.requires_grad for p in model.parameters())
    print(f"classes {class_names}: losses {[round(v, 4) for v in losses]}, val loss {val_loss:.4f}, "
          f"accuracy {corrects}/{len(image_datasets['val'])}, {frozen} frozen tensors")
    report(args, losses=losses, val_loss=val_loss, corrects=corrects, classes=class_names, frozen=frozen)


if __name__ == "__main__":
    main()
